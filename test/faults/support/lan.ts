import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Resources } from './scenario.js';

/**
 * A private LAN for http-lan.fault.ts: a network namespace the test makes (`ip netns add`),
 * with a veth pair inside it holding the daemon's address (10.200.<n>.1) on one end and the
 * devices' addresses (10.200.<n>.11…) on the other. Daemon and devices both run inside
 * (`ip netns exec`), so the daemon sees real non-loopback peers and no packet leaves this
 * machine. Needs root and iproute2: `makeLan` says why not, for `t.skip`.
 */

const CLIENT_PATH = fileURLToPath(new URL('./lan-client.mjs', import.meta.url));

export interface Lan {
  ns: string;
  /** The daemon's address. */
  daemonAddress: string;
  /** The n-th device's address (n ≥ 1). */
  device(n: number): string;
  /** Runs a command inside the namespace (`ip netns exec <ns> …`). */
  prefix: string[];
}

/** Devices per LAN: addresses .11 to .(10 + DEVICES). */
const DEVICES = 8;
let lanNo = 0;

export function makeLan(res: Resources): Lan | string {
  if (process.getuid?.() !== 0) return 'needs root to make a network namespace (ip netns add)';
  const subnet = 100 + ((process.pid + lanNo++) % 150);
  const ns = `homeostat-lan-${process.pid}-${lanNo}`;
  const ip = (...args: string[]) => execFileSync('ip', args, { stdio: 'pipe' });
  try {
    ip('netns', 'add', ns);
  } catch (error) {
    return `cannot make a network namespace (ip netns add): ${(error as Error).message.split('\n')[0]}`;
  }
  res.add(() => ip('netns', 'del', ns));
  const inside = (...args: string[]) => ip('-n', ns, ...args);
  const daemonAddress = `10.200.${subnet}.1`;
  const device = (n: number) => `10.200.${subnet}.${10 + n}`;
  try {
    inside('link', 'set', 'lo', 'up');
    inside('link', 'add', 'lan0', 'type', 'veth', 'peer', 'name', 'lan1');
    inside('addr', 'add', `${daemonAddress}/24`, 'dev', 'lan0');
    for (let n = 1; n <= DEVICES; n++) inside('addr', 'add', `${device(n)}/24`, 'dev', 'lan1');
    inside('link', 'set', 'lan0', 'up');
    inside('link', 'set', 'lan1', 'up');
  } catch (error) {
    return `cannot set up the namespace's veth pair: ${(error as Error).message.split('\n')[0]}`;
  }
  return { ns, daemonAddress, device, prefix: ['ip', 'netns', 'exec', ns] };
}

/** What a device job prints (see lan-client.mjs). */
export type ClientReport = Record<string, unknown> & { event: 'ready' | 'done' };

export interface LanClient {
  /** Resolves with the `ready` line (jobs that run until stopped print it). */
  ready: Promise<ClientReport>;
  /** Resolves with the `done` line. */
  done: Promise<ClientReport>;
  /** Tells a job that runs until stopped to finish; resolves with its `done` line. */
  stop(): Promise<ClientReport>;
}

/** Starts a device job inside the LAN (killed at the release if still running). */
export function lanClient(res: Resources, lan: Lan, job: Record<string, unknown>): LanClient {
  const child: ChildProcessWithoutNullStreams = spawn(
    lan.prefix[0]!,
    [...lan.prefix.slice(1), process.execPath, CLIENT_PATH, JSON.stringify(job)],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  res.add(() => child.kill('SIGKILL'));
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const lines: ClientReport[] = [];
  const waiters: Array<() => void> = [];
  let partial = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString('utf8')).split('\n');
    partial = parts.pop() ?? '';
    for (const part of parts) if (part.startsWith('{')) lines.push(JSON.parse(part) as ClientReport);
    for (const wake of waiters.splice(0)) wake();
  });
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const line = (event: ClientReport['event']): Promise<ClientReport> =>
    new Promise((resolve, reject) => {
      const check = () => {
        const found = lines.find((l) => l.event === event);
        if (found) resolve(found);
        else waiters.push(check);
      };
      check();
      void exited.then(() => {
        const found = lines.find((l) => l.event === event);
        if (found) resolve(found);
        else
          reject(
            new Error(`device job ${String(job.kind)} ended without "${event}": ${stderr.slice(-2_000)}`),
          );
      });
    });
  const done = line('done');
  const ready = line('ready');
  // Jobs that never say ready (requests, flood): only a caller that waits for it hears why.
  ready.catch(() => {});
  done.catch(() => {});
  return {
    ready,
    done,
    stop: () => {
      child.stdin.write('stop\n');
      return done;
    },
  };
}
