import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { accessSync, constants, readFileSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import type { MqttConnectionOptions } from '../../src/mqtt/client.js';
import { freePort } from '../support/net.js';
import { type HasAfter, makeTempDir } from '../support/tmp.js';

/**
 * A real Mosquitto broker per test, on a free loopback port, configured in a temporary
 * directory: anonymous or password access, optionally TLS with a CA and certificates made here
 * with `openssl`. Brokers left running are killed when the test process exits.
 */

/** Where Debian/Ubuntu's `mosquitto` package puts the broker. */
const MOSQUITTO_PATHS = ['/usr/sbin/mosquitto', '/usr/bin/mosquitto', '/usr/local/sbin/mosquitto'];
const MOSQUITTO_PASSWD_PATHS = ['/usr/bin/mosquitto_passwd', '/usr/local/bin/mosquitto_passwd'];
const INSTALL_HINT = 'install it with `sudo apt-get install -y mosquitto` (CI does)';

/** How long a (re)started broker may take to accept connections, ms. */
const START_TIMEOUT_MS = 5_000;
/** How long a SIGTERM'd broker may take to exit before SIGKILL, ms. */
const STOP_TIMEOUT_MS = 3_000;

export interface BrokerOptions {
  /** Users of the password file; when given, anonymous access is off unless `allowAnonymous`. */
  passwordFile?: { username: string; password: string }[];
  /** TLS listener (mqtts) with a CA, a server certificate for 127.0.0.1 and a client certificate. */
  tls?: boolean;
  /** With `tls`: the broker refuses clients without a certificate signed by the CA. Default false. */
  requireCertificate?: boolean;
  /** Default: true without a password file, false with one. */
  allowAnonymous?: boolean;
}

export interface Broker {
  port: number;
  /** `mqtt://127.0.0.1:PORT`, or `mqtts://…` with `tls`. */
  url: string;
  /** With `tls`: the CA certificate that signed the server and client certificates (PEM file). */
  caPath?: string;
  clientCertPath?: string;
  clientKeyPath?: string;
  /** The temporary directory: mosquitto.conf, mosquitto.log, passwords, certificates. */
  dir: string;
  /** SIGTERM, then waits for the exit (SIGKILL after a few seconds). Idempotent. */
  stop(): Promise<void>;
  /** Starts the broker again on the same port (sessions and retained messages are gone). */
  start(): Promise<void>;
  /** Stops the broker and deletes its directory. */
  dispose(): Promise<void>;
  /** The broker's log so far, for assertion messages. */
  log(): string;
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Starts a Mosquitto broker; rejects with an install hint when the binary is missing. */
export async function startMosquitto(opts: BrokerOptions = {}): Promise<Broker> {
  const mosquitto = findBinary(MOSQUITTO_PATHS, 'mosquitto');
  const { dir, remove } = makeTempDir('homeostat-mosquitto-');
  const logPath = join(dir, 'mosquitto.log');
  const confPath = join(dir, 'mosquitto.conf');
  const tls = opts.tls ? makeServerTls(dir) : undefined;
  const lines = [
    // Mosquitto started as root drops to the `mosquitto` user, which cannot read this directory.
    `user ${userInfo().username}`,
    'persistence false',
    `log_dest file ${logPath}`,
    'log_type error',
    'log_type warning',
    'log_type notice',
    'log_type information',
    'connection_messages true',
  ];
  if (opts.passwordFile) {
    const passwdPath = join(dir, 'passwd');
    const mosquittoPasswd = findBinary(MOSQUITTO_PASSWD_PATHS, 'mosquitto_passwd');
    opts.passwordFile.forEach(({ username, password }, i) => {
      // -c creates the file for the first user only; later users are added to it.
      const args =
        i === 0 ? ['-b', '-c', passwdPath, username, password] : ['-b', passwdPath, username, password];
      execFileSync(mosquittoPasswd, args, { stdio: 'pipe' });
    });
    lines.push(`password_file ${passwdPath}`);
  }
  lines.push(`allow_anonymous ${opts.allowAnonymous ?? !opts.passwordFile}`);

  let port = 0;
  let child: ChildProcess | undefined;
  const launch = async (): Promise<void> => {
    const listener = [`listener ${port} 127.0.0.1`];
    if (tls) {
      listener.push(`cafile ${tls.caPath}`, `certfile ${tls.certPath}`, `keyfile ${tls.keyPath}`);
      listener.push(`require_certificate ${opts.requireCertificate === true}`);
    }
    writeFileSync(confPath, `${[...lines, ...listener].join('\n')}\n`);
    const proc = spawn(mosquitto, ['-c', confPath], { stdio: ['ignore', 'ignore', 'pipe'] });
    running.add(proc);
    let stderr = '';
    proc.stderr?.setEncoding('utf8');
    proc.stderr?.on('data', (chunk: string) => {
      stderr += chunk;
    });
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    exited.then(() => running.delete(proc));
    try {
      await waitForPort(port, exited);
    } catch (error) {
      proc.kill('SIGKILL');
      await exited;
      throw new Error(
        `mosquitto did not start on port ${port}: ${(error as Error).message}\n${stderr}${readLog(logPath)}`,
      );
    }
    child = proc;
  };

  // The free port is found by binding port 0 and closing; another process may take it in
  // between, so a failed start is retried on a new port (a restart keeps its port).
  for (let tryNo = 1; ; tryNo++) {
    port = await freePort();
    try {
      await launch();
      break;
    } catch (error) {
      if (tryNo >= 3) throw error;
    }
  }

  const stop = async (): Promise<void> => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  };
  const start = async (): Promise<void> => {
    if (child) return;
    await launch();
  };
  return {
    port,
    url: `${tls ? 'mqtts' : 'mqtt'}://127.0.0.1:${port}`,
    ...(tls
      ? { caPath: tls.caPath, clientCertPath: tls.clientCertPath, clientKeyPath: tls.clientKeyPath }
      : {}),
    dir,
    stop,
    start,
    dispose: async () => {
      await stop();
      remove();
    },
    log: () => readLog(logPath),
  };
}

/**
 * Connection timings for a broker that restarts under the test: reconnect 20 ms doubling to
 * 100 ms (found again within a tenth of a second; the daemon's default starts at 1 s), and
 * publishes and stops that give up after 2 s.
 */
export const FAST_RECONNECT: MqttConnectionOptions = {
  reconnect: { initialMs: 20, maxMs: 100, jitter: 0.2 },
  publishTimeoutMs: 2_000,
  stopTimeoutMs: 2_000,
};

/**
 * A broker for one test (`t`: node:test's context, or anything with `after`), disposed of
 * after it. A test that must stop other things first passes its own `after` that runs them
 * in reverse.
 */
export async function brokerFor(t: HasAfter, opts?: BrokerOptions): Promise<Broker> {
  const broker = await startMosquitto(opts);
  t.after(() => broker.dispose());
  return broker;
}

/** A certificate authority: its certificate and key (PEM files). */
export interface TestCa {
  certPath: string;
  keyPath: string;
}

/**
 * Makes a self-signed CA in `dir` (files `<name>.crt`, `<name>.key`): the broker's own, or
 * an unrelated one for "wrong CA" tests. EC P-256 keys: fast to generate, accepted everywhere.
 */
export function createTestCa(dir: string, name = 'ca'): TestCa {
  const conf = writeOpensslConf(dir);
  const certPath = join(dir, `${name}.crt`);
  const keyPath = join(dir, `${name}.key`);
  openssl([
    'req',
    '-x509',
    '-new',
    ...newEcKey(keyPath),
    '-out',
    certPath,
    '-days',
    '2',
    '-subj',
    `/CN=homeostat test ${name}`,
    '-config',
    conf,
    '-extensions',
    'v3_ca',
  ]);
  return { certPath, keyPath };
}

export interface ServerTls {
  caPath: string;
  certPath: string;
  keyPath: string;
  clientCertPath: string;
  clientKeyPath: string;
}

/** A CA, a server certificate for 127.0.0.1 and a client certificate, signed by it, in `dir`. */
export function makeServerTls(dir: string): ServerTls {
  const ca = createTestCa(dir, 'ca');
  const server = signedCert(dir, ca, 'server', '/CN=127.0.0.1', 'server_cert');
  const client = signedCert(dir, ca, 'client', '/CN=homeostat-test-client', 'client_cert');
  return {
    caPath: ca.certPath,
    certPath: server.certPath,
    keyPath: server.keyPath,
    clientCertPath: client.certPath,
    clientKeyPath: client.keyPath,
  };
}

function signedCert(
  dir: string,
  ca: TestCa,
  name: string,
  subject: string,
  extensions: string,
): { certPath: string; keyPath: string } {
  const conf = writeOpensslConf(dir);
  const keyPath = join(dir, `${name}.key`);
  const csrPath = join(dir, `${name}.csr`);
  const certPath = join(dir, `${name}.crt`);
  openssl(['req', '-new', ...newEcKey(keyPath), '-out', csrPath, '-subj', subject, '-config', conf]);
  openssl([
    'x509',
    '-req',
    '-in',
    csrPath,
    '-CA',
    ca.certPath,
    '-CAkey',
    ca.keyPath,
    '-CAcreateserial',
    '-out',
    certPath,
    '-days',
    '2',
    '-extfile',
    conf,
    '-extensions',
    extensions,
  ]);
  return { certPath, keyPath };
}

/** `openssl req` arguments for a new EC P-256 key, unencrypted, written to `keyPath`. */
const newEcKey = (keyPath: string) => [
  '-newkey',
  'ec',
  '-pkeyopt',
  'ec_paramgen_curve:prime256v1',
  '-nodes',
  '-keyout',
  keyPath,
];

/**
 * Our own OpenSSL config, so the extensions do not depend on the system's openssl.cnf: the
 * server certificate names 127.0.0.1 in its SAN (what Node checks for an IP host).
 */
function writeOpensslConf(dir: string): string {
  const path = join(dir, 'openssl.cnf');
  writeFileSync(
    path,
    [
      '[req]',
      'distinguished_name = dn',
      '[dn]',
      '[v3_ca]',
      'basicConstraints = critical,CA:TRUE',
      'keyUsage = critical,keyCertSign,cRLSign',
      'subjectKeyIdentifier = hash',
      '[server_cert]',
      'basicConstraints = CA:FALSE',
      'keyUsage = critical,digitalSignature,keyAgreement',
      'extendedKeyUsage = serverAuth',
      'subjectAltName = IP:127.0.0.1',
      'authorityKeyIdentifier = keyid',
      '[client_cert]',
      'basicConstraints = CA:FALSE',
      'keyUsage = critical,digitalSignature,keyAgreement',
      'extendedKeyUsage = clientAuth',
      'authorityKeyIdentifier = keyid',
      '',
    ].join('\n'),
  );
  return path;
}

function openssl(args: string[]): void {
  try {
    execFileSync('openssl', args, { stdio: 'pipe' });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? '';
    throw new Error(`openssl ${args.join(' ')} failed: ${(error as Error).message}\n${stderr}`);
  }
}

function findBinary(candidates: string[], name: string): string {
  for (const path of candidates) {
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here; try the next place
    }
  }
  throw new Error(`${name} not found (looked in ${candidates.join(', ')}): ${INSTALL_HINT}`);
}

/** Resolves once `port` accepts a TCP connection; rejects if `exited` settles first or on timeout. */
async function waitForPort(port: number, exited: Promise<void>): Promise<void> {
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (gone) throw new Error('mosquitto exited');
    if (await canConnect(port)) {
      if (gone) throw new Error('mosquitto exited');
      return;
    }
    if (Date.now() > deadline) throw new Error(`port not open within ${START_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function readLog(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
