/** Doctor check 1: the config file. */
import { loadConfigFile } from '../../config/load.js';
import type { Config } from '../../config/schema.js';
import type { CheckResult } from '../../kinds/types.js';

/** Loads and validates the config file; `config` is set when it is valid. */
export function checkConfig(configPath: string): { result: CheckResult; config?: Config } {
  const loaded = loadConfigFile(configPath);
  if (!loaded.ok) {
    return {
      result: {
        name: 'config',
        status: 'fail',
        detail: `${configPath} is not valid:\n${loaded.errors.join('\n')}`,
        fix: `correct the lines above (homeostat validate --config ${configPath} lists them again)`,
      },
    };
  }
  const loops = Object.keys(loaded.config.loops).length;
  // Deprecated keys still work: listed under the ok line, never a failure.
  const detail = [`${configPath} is valid (${loops} loop(s))`, ...loaded.warnings].join('\n');
  return { result: { name: 'config', status: 'ok', detail }, config: loaded.config };
}
