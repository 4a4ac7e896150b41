/**
 * One daemon for a whole describe: a private Mosquitto, the daemon as a child process on a
 * config of the suite's, and their release after the suite. For suites whose tests talk to one
 * running daemon (`homeostat set`, what its logs and database show) and need no fresh one each.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { type CliProcess, killAll, makeTempDir, startDaemon } from './helpers.js';
import { type Broker, type BrokerOptions, startMosquitto } from './mosquitto.js';

/** What the suite's tests use; every field is set once the suite's `before` has run. */
export interface SuiteDaemon {
  broker: Broker;
  /** The temp dir holding the config and the database (removed after the suite). */
  dir: string;
  /** `<dir>/config.yaml`. */
  configPath: string;
  /** `<dir>/state.db`. */
  dbPath: string;
  daemon: CliProcess;
}

/**
 * Registers on the enclosing describe: before its tests, a Mosquitto (`brokerOptions`), a temp
 * dir named `<prefix>…` with `config.yaml` = `configText(broker)`, and the daemon on it, awaited
 * until it says it is connected to the broker; after them, every child killed, the broker
 * stopped and the dir removed.
 */
export function daemonOnBrokerForSuite(
  prefix: string,
  configText: (broker: Broker) => string,
  brokerOptions?: BrokerOptions,
): SuiteDaemon {
  const suite = {} as SuiteDaemon;
  let removeDir = () => {};
  before(async () => {
    suite.broker = await startMosquitto(brokerOptions);
    const temp = makeTempDir(prefix);
    removeDir = temp.remove;
    suite.dir = temp.dir;
    suite.configPath = join(temp.dir, 'config.yaml');
    suite.dbPath = join(temp.dir, 'state.db');
    writeFileSync(suite.configPath, configText(suite.broker));
    suite.daemon = startDaemon({ configPath: suite.configPath, dbPath: suite.dbPath });
    await suite.daemon.waitForLine(/^MQTT: connected/);
  });
  after(async () => {
    await killAll();
    await suite.broker.dispose();
    removeDir();
  });
  return suite;
}
