import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** homeostat's version, from the package.json above this file (src/ under tsx, dist/ when built). */
export function homeostatVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    const candidate = path.join(dir, 'package.json');
    if (fs.existsSync(candidate)) {
      const pkg = JSON.parse(fs.readFileSync(candidate, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'homeostat' && pkg.version) return pkg.version;
    }
    dir = path.dirname(dir);
  }
  return 'unknown';
}
