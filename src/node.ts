import type { Logger } from 'pino';
import { loadConfigFileOffThread } from './config/load.js';
import type { Config } from './config/schema.js';
import { DesiredCommands } from './control/desired-commands.js';
import { Daemon } from './daemon/daemon.js';
import type { GpioPortFactory } from './drivers/gpio/port.js';
import { buildHttpServer } from './http/node-http.js';
import type { HttpServer } from './http/server.js';
import { buildDrivers, type Drivers, speedProblem } from './kinds/build.js';
import type { MqttBridge } from './mqtt/bridge.js';
import type { MqttConnection, MqttConnectionOptions } from './mqtt/client.js';
import { NodeAlerts } from './node/alerts-wiring.js';
import { NodeSetupError } from './node/errors.js';
import { NodeBridge, openMqtt } from './node/mqtt-wiring.js';
import { lockDatabase, openStore } from './node/store-wiring.js';
import { redactUrl } from './redact.js';
import { ConfigWatcher } from './runtime/config-watcher.js';
import { SafeManifestWriter } from './safe/manifest.js';
import type { DaemonLock } from './store/daemon-lock.js';
import type { StoreSupervisor } from './store/supervisor.js';
import { createNotifier, type Notifier } from './systemd/notify.js';
import { monotonicClock, systemdStatusLine, WatchdogGate } from './systemd/watchdog.js';
import type { Clock } from './time/clock.js';

export { DatabaseInUseError, NodeSetupError } from './node/errors.js';
export { MQTT_START_WAIT_MS } from './node/mqtt-wiring.js';

export interface NodeOptions {
  /** The config file: reloads read it again, and it is watched for edits. */
  configPath: string;
  /** Its content as loaded and validated at start (the text decides the generation). */
  loaded: { config: Config; text: string };
  /** The database file (`--db` or storage.path, already chosen). */
  dbPath: string;
  /** Real, scaled (`--speed`) or, in tests, manual. */
  clock: Clock;
  logger: Logger;
  /** systemd's notify socket; default a disabled one (tests, or not under systemd). */
  notifier?: Notifier;
  /** `--mqtt-url`: wins over the config's mqtt.url. */
  mqttUrl?: string | undefined;
  /** Where an MQTT password comes from without a passwordFile; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** The MQTT connection's timings (tests shorten the reconnect delays). */
  mqttConnection?: MqttConnectionOptions;
  /** Clock speed (`--speed`): refused unless every driver is simulated. Default 1. */
  speed?: number;
  /** Each loop's status is looked at this often (clock time), ms: a line when it changed meaningfully, hourly otherwise; 0 disables. Default 60 s × speed (≤ 5). */
  statusEveryMs?: number;
  /** GPIO pin access; tests pass a fake. Default onoff on /sys, the sysfs files under another gpio.sysfsRoot. */
  gpioPortFactory?: GpioPortFactory;
  /** Watch the config file and reload on edits; default true (tests reload by hand). */
  watchConfig?: boolean;
  /** Times the systemd watchdog gate; default monotonic (immune to wall-clock steps). */
  gateClock?: Clock;
  /**
   * The HTTP API and dashboard: where to listen instead of the config's http.host/port (port
   * 0: a free one), or false for none. Default: as the config says.
   */
  http?: { host?: string; port?: number; retryEveryMs?: number } | false;
}

/**
 * Composition root of one homeostat node: the clock, the store, the drivers, the MQTT
 * connection and bridge, the systemd watchdog gate, the daemon and the config watcher. Built
 * the same way by `homeostat run` and by the tests (test/support/node.ts), so what is tested
 * is what runs. The constructor assigns; `start()` acquires; `stop()` releases in reverse.
 * The MQTT side is in node/mqtt-wiring.ts, the database's lock and store in node/store-wiring.ts.
 */
export class Node {
  readonly clock: Clock;
  /**
   * Times the guards against people and networks (change limits, rejection coalescing, the Home
   * Assistant birth debounce): the monotonic real clock when `clock` is scaled (`--speed`), so a
   * flood is limited in the simulation as on a real node; `clock` itself otherwise.
   */
  private readonly guardClock: Clock;
  readonly config: Config;
  readonly store: StoreSupervisor;
  readonly drivers: Drivers;
  readonly daemon: Daemon;
  readonly gate: WatchdogGate;
  /** The node's one connection, shared by the MQTT drivers and the bridge. */
  readonly connection: MqttConnection | undefined;
  /** Setpoint, mode and fault-reset commands from MQTT and HTTP: one path, one change budget. */
  readonly commands: DesiredCommands;
  /** Alerts: the monitor of every loop status, the outbox and its delivery. */
  readonly alerts: NodeAlerts;
  /** The bridge and the presence watch (none without a broker). */
  private readonly mqtt: NodeBridge;
  private readonly httpServer: HttpServer | undefined;
  private readonly watcher: ConfigWatcher | undefined;
  private readonly notifier: Notifier;
  private readonly logger: Logger;
  /** One daemon per database: held from the constructor until the store is closed. */
  private readonly lock: DaemonLock | undefined;
  /** The last applied config for `homeostat safe`, beside the database (safe/manifest.ts). */
  private readonly safeManifest: SafeManifestWriter | undefined;
  /** The start, then every reload, chained: see `start()`. */
  private pending: Promise<unknown> | undefined;
  private started = false;
  private stopping: Promise<void> | undefined;

  /**
   * Throws NodeSetupError when `speed` is not 1 and a driver is real, DatabaseInUseError when
   * another daemon holds the database (before anything is opened or driven).
   */
  constructor(private readonly opts: NodeOptions) {
    const { clock, logger, loaded } = opts;
    this.clock = clock;
    this.guardClock = (opts.speed ?? 1) !== 1 ? monotonicClock : clock;
    this.logger = logger;
    this.config = loaded.config;
    // First of all: a second daemon must not touch the database, the broker or the relays.
    this.lock = lockDatabase(
      opts.dbPath,
      this.config.node.id,
      // Tests simulate a crash by closing the store's database without stopping the node.
      () => this.store === undefined || this.store.database.open,
      logger,
    );
    this.safeManifest = SafeManifestWriter.beside(opts.dbPath, opts.configPath, logger, opts.env);
    try {
      this.notifier = opts.notifier ?? createNotifier({});
      const speed = opts.speed ?? 1;
      // One connection per node, made before the drivers: MQTT sensors and actuators share it
      // with the bridge (which starts it).
      const mqtt = openMqtt(this.config, opts, logger);
      this.connection = mqtt.connection;
      this.drivers = buildDrivers(this.config, clock, {
        mqtt: mqtt.transport,
        logger: logger.child({ component: 'drivers' }),
        gpio: { portFactory: opts.gpioPortFactory },
      });
      const problem = speed !== 1 ? speedProblem(this.drivers) : undefined;
      if (problem) throw new NodeSetupError(problem);
      this.logStart(speed);
      this.store = openStore(opts.dbPath, clock, logger, this.config.storage);
      this.gate = this.watchdogGate();
      this.daemon = this.buildDaemon(loaded.text, speed);
      this.commands = this.commandPath();
      this.alerts = this.buildAlerts(mqtt);
      const { daemon, store, commands, guardClock } = this;
      this.mqtt = new NodeBridge({
        ...mqtt,
        config: this.config,
        daemon,
        store,
        commands,
        clock,
        guardClock,
        logger,
      });
      this.httpServer = this.buildHttp();
      this.watcher =
        opts.watchConfig === false
          ? undefined
          : new ConfigWatcher(opts.configPath, () => void this.reload('config file changed'), logger);
    } catch (error) {
      this.lock?.release();
      throw error;
    }
  }

  /** The HTTP API server (none when http.enabled is false or its token file is unreadable). */
  get http(): HttpServer | undefined {
    return this.httpServer;
  }

  /** The MQTT bridge while it runs (none without a broker, or when it could not start). */
  get bridge(): MqttBridge | undefined {
    return this.mqtt.bridge;
  }

  /**
   * Starts regulating: the broker first when the config has MQTT drivers (a bounded wait),
   * then the daemon, then the watchdog gate, then the bridge if it did not start first, then
   * the config watcher. Resolves once started; rejects when the daemon could not start (stop
   * the node then). Call once.
   */
  start(): Promise<void> {
    if (this.pending) throw new Error('Node: start() called twice');
    // Without MQTT drivers the bridge starts after the daemon, as the status it publishes exists
    // by then. With them, it starts first and regulation waits (boundedly) for the broker.
    const brokerFirst = this.mqtt.startsFirst;
    const starting = (brokerFirst ? this.mqtt.connect() : Promise.resolve())
      .then(() => {
        // Before the first cycle drives a relay, and again with the generation the database gave.
        this.safeManifest?.write(this.config);
        // Before the first cycle: a sensor dead at boot is told too.
        this.alerts.start();
        return this.daemon.start();
      })
      .then(() => {
        this.recordSafeManifest();
        this.started = true;
        this.gate.start();
        if (!brokerFirst) this.mqtt.start();
        // Never awaited for regulation: a port that is taken is logged, shown and retried.
        void this.httpServer?.start();
      });
    // Hot reload: SIGHUP or an edit of the file. Reloads never overlap and never run before the
    // start finished (`pending` chains them); a stop waits for both. A reload that fails never
    // breaks the chain (later edits still apply); one the database refused is retried by the
    // daemon with backoff.
    this.pending = starting;
    return starting.then(() => {
      if (!this.stopping) this.watcher?.start();
    });
  }

  /** Reloads the config file (`reason` is logged): queued after the start and earlier reloads. */
  reload(reason: string): Promise<void> {
    const reloaded = (this.pending ?? Promise.resolve())
      .then(async () => {
        if (!this.started) return;
        this.logger.info(`${reason}: reloading ${this.opts.configPath}`);
        // Off the event loop: a file at the size cap takes long to parse (config/load.ts).
        const loaded = await loadConfigFileOffThread(this.opts.configPath);
        await this.daemon.reload(loaded);
        if (loaded.ok && JSON.stringify(loaded.config.http) !== JSON.stringify(this.config.http)) {
          this.logger.warn(
            'the http block changed: the API keeps its address and token until the next restart',
          );
        }
      })
      .catch((error) => this.logger.error({ err: error }, 'reload failed'));
    this.pending = reloaded;
    return reloaded;
  }

  /**
   * Drives every actuator to its safe state and releases everything, in reverse: waits for the
   * start and the reloads in progress, stops the daemon, then the bridge, and closes the store
   * and releases the database's lock last. Rejects when the stop failed (the notifier is closed either way). Safe to call twice.
   */
  stop(signal: string): Promise<void> {
    this.stopping ??= this.stopNow(signal);
    return this.stopping;
  }

  private async stopNow(signal: string): Promise<void> {
    const { notifier } = this;
    this.gate.stop();
    // A last ping: the watchdog cannot fire during the stop (TimeoutStopSec=30 < WatchdogSec=60).
    notifier.watchdog();
    notifier.stopping();
    notifier.status(`${signal}: driving actuators to their safe state`);
    this.watcher?.stop();
    try {
      await (this.pending ?? Promise.resolve()).catch(() => undefined);
      // No more requests first: a write must not arrive while the loops stop.
      await this.httpServer?.stop();
      await this.daemon.stop(signal);
      // What is undelivered stays in the outbox for the next start.
      await this.alerts.stop();
      await this.mqtt.stop();
      this.commands.stop();
      this.store.close();
    } finally {
      // After the store: the next daemon may open the database once this is released.
      this.lock?.release();
      notifier.close();
    }
  }

  /** The config in force now, for `homeostat safe`; never throws, never stops regulation. */
  private recordSafeManifest(): void {
    this.safeManifest?.write(
      this.daemon.currentConfig(),
      () => this.store.desired.latestConfig()?.generation,
    );
  }

  /** READY=1 once every loop has cycled; WATCHDOG=1 only while every loop keeps cycling. */
  private watchdogGate(): WatchdogGate {
    const { notifier, logger } = this;
    return new WatchdogGate({
      clock: this.opts.gateClock ?? monotonicClock,
      notifier,
      pingEveryMs: notifier.watchdogIntervalMs,
      summary: () =>
        systemdStatusLine(
          this.daemon.statuses(),
          (loop) => this.daemon.currentConfig().loops[loop]?.unit ?? '',
        ),
      onWithheld: (silent) =>
        logger.error(
          { silent },
          `watchdog ping withheld: no successful cycle from ${silent.map((l) => l.name).join(', ')}; systemd will restart homeostat`,
        ),
    });
  }

  private buildDaemon(configText: string, speed: number): Daemon {
    return new Daemon({
      liveness: this.gate,
      config: this.config,
      configText,
      clock: this.clock,
      logger: this.logger,
      drivers: this.drivers,
      store: this.store,
      statusEveryMs: this.opts.statusEveryMs ?? 60_000 * Math.max(1, Math.min(speed, 5)),
    });
  }

  /** Setpoint, mode and fault-reset commands, whose change budgets follow the applied config. */
  private commandPath(): DesiredCommands {
    const commands = new DesiredCommands({
      control: this.daemon,
      desired: this.store.desired,
      clock: this.clock,
      guardClock: this.guardClock,
      // The command path's storage errors are logged as MQTT's were (one guard for both).
      logger: this.logger.child({ component: 'mqtt' }),
    });
    // Removed loops' change budgets are forgotten, with or without a broker.
    this.daemon.subscribe({
      configApplied: (config) => {
        commands.retainLoops(Object.keys(config.loops));
        // Also a reload the database took only on a retry: `homeostat safe` knows its pins.
        this.recordSafeManifest();
      },
    });
    return commands;
  }

  /** Alerts on the node's clock, delivered on the guard clock (real time under `--speed`). */
  private buildAlerts({ connection, settings }: ReturnType<typeof openMqtt>): NodeAlerts {
    return new NodeAlerts({
      config: this.config,
      store: this.store,
      daemon: this.daemon,
      clock: this.clock,
      deliveryClock: this.guardClock,
      logger: this.logger,
      mqtt: connection && settings ? { connection, base: settings.baseTopic } : undefined,
    });
  }

  /** The HTTP API and dashboard, unless the options say none. */
  private buildHttp(): HttpServer | undefined {
    const { http } = this.opts;
    if (http === false) return undefined;
    return buildHttpServer({
      daemon: this.daemon,
      store: this.store,
      gate: this.gate,
      connection: this.connection,
      commands: this.commands,
      clock: this.clock,
      logger: this.logger,
      alerts: this.alerts,
      ...(http ? { listen: http } : {}),
    });
  }

  private logStart(speed: number): void {
    const rawMqttUrl = this.opts.mqttUrl ?? this.config.mqtt?.url;
    const mqttUrl = rawMqttUrl === undefined ? undefined : redactUrl(rawMqttUrl);
    this.logger.info(
      { config: this.opts.configPath, mqttUrl, speed },
      `starting homeostat (node ${this.config.node.id})${speed !== 1 ? ` at ${speed}× speed` : ''}`,
    );
  }
}
