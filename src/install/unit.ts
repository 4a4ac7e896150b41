/**
 * The unit file the installer writes: systemd/homeostat.service as shipped, with its node
 * (/usr/bin/node) replaced by the node running the installer when that is another one
 * (/usr/local/bin/node from a tarball, say), so the service runs on the node that was checked.
 */
import { HIDDEN_FROM_SERVICE, UNIT_NODE } from './layout.js';

export function unitText(shipped: string, nodePath: string): string {
  if (nodePath === UNIT_NODE) return shipped;
  // Only where node is the program run (the start of an Exec…= value), never in comments.
  return shipped.replace(/^(Exec[A-Za-z]*=[-@:+!]*)\/usr\/bin\/node(?= )/gm, `$1${nodePath}`);
}

/** Why the service could not run this node, or undefined when it can. */
export function nodeProblem(nodePath: string): string | undefined {
  const hidden = HIDDEN_FROM_SERVICE.find((dir) => nodePath.startsWith(dir));
  if (hidden === undefined) return undefined;
  return (
    `node runs from ${nodePath}, below ${hidden}, which the service cannot see (ProtectHome=yes): ` +
    'install Node.js 20 for the whole system (systemd/README.md, step 1) and run the installer with it'
  );
}
