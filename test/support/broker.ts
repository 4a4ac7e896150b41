/**
 * What the MQTT benches stand on (test/bench/mqtt-*.ts): a private Mosquitto, the demo config
 * pointing at it, a temp dir for the database, a logger that keeps stdout for the figures, and
 * the release of all of it. Tests use test/integration/mosquitto.ts's `brokerFor` instead.
 */
import pino, { type Logger } from 'pino';
import { type Broker, startMosquitto } from '../integration/mosquitto.js';
import { demoConfigText } from './config.js';
import { makeTempDir } from './tmp.js';

export interface BenchBroker {
  broker: Broker;
  /** A new temp dir (removed by `release`). */
  dir: string;
  /** The demo config with mqtt.url set to the broker. */
  demoText: string;
  /** Warnings and errors only, to stderr: stdout is for the figures. */
  logger: Logger;
  /** Runs `fn` at the release, before what was acquired earlier (reverse order). */
  onRelease(fn: () => unknown): void;
  /** Releases everything, in reverse order; a failure is reported on stderr and the rest goes on. */
  release(): Promise<void>;
}

/** Starts the broker and makes the temp dir (named `<prefix>…`). */
export async function benchBroker(prefix: string): Promise<BenchBroker> {
  const broker = await startMosquitto();
  const { dir, remove } = makeTempDir(prefix);
  const releases: Array<() => unknown> = [remove, () => broker.dispose()];
  return {
    broker,
    dir,
    demoText: demoConfigText((doc) => doc.setIn(['mqtt', 'url'], broker.url)),
    logger: pino({ level: 'warn' }, pino.destination(2)),
    onRelease: (fn) => releases.push(fn),
    release: async () => {
      for (const release of releases.reverse()) {
        try {
          await release();
        } catch (error) {
          process.stderr.write(`cleanup failed: ${(error as Error).message}\n`);
        }
      }
    },
  };
}
