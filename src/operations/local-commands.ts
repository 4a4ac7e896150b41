import { CONFIG_OPTION, DB_OPTION, SYSFS_OPTION } from './cli-options.js';
import type { Operation } from './operation.js';

/**
 * The commands that work on files, the database and the hardware of this machine, without a
 * daemon's API: running the daemon, checking, installing.
 */

const RUN_DB = {
  ...DB_OPTION,
  description:
    'the database (default: storage.path, else $STATE_DIRECTORY/homeostat.db, else ./var/homeostat.db)',
};

export const SETUP_COMMANDS = {
  run: {
    summary: 'runs the daemon: regulates every loop of the config until SIGINT/SIGTERM',
    cli: {
      command: 'run',
      args: '[CONFIG]',
      positional: 'config',
      transport: 'local',
      options: [
        CONFIG_OPTION,
        RUN_DB,
        { name: 'mqtt-url', value: 'URL', description: "the broker, instead of the config's mqtt.url" },
        { name: 'speed', value: 'N', description: 'the clock N× faster (simulated drivers only)' },
        {
          name: 'http-port',
          value: 'N|off',
          description: 'the API and dashboard on another port (0: any free one), or off',
        },
        {
          name: 'log-format',
          value: 'json|pretty|journal',
          description: 'how to log (default: pretty on a terminal, journal under systemd, else json)',
        },
      ],
      example: 'homeostat run --config config/demo.yaml --speed 60',
    },
  },
  validate: {
    summary: 'checks a config file: one "path: message" line per problem (exit 1), or "valid"',
    cli: {
      command: 'validate',
      args: '[CONFIG]',
      positional: 'config',
      transport: 'local',
      options: [CONFIG_OPTION],
      example: 'homeostat validate config/demo.yaml',
    },
  },
  plan: {
    summary:
      'what applying the config would change versus the one the daemon applied last (exit 0 none, 2 changes)',
    cli: {
      command: 'plan',
      args: '[CONFIG]',
      positional: 'config',
      transport: 'local',
      options: [CONFIG_OPTION, DB_OPTION],
      example: 'homeostat plan /etc/homeostat/config.yaml',
    },
  },
} satisfies Record<string, Operation>;

export const MAINTENANCE_COMMANDS = {
  doctor: {
    summary: 'checks GPIO, 1-Wire, the broker, the database, the HTTP port and systemd; says how to fix each',
    cli: {
      command: 'doctor',
      args: '[CONFIG]',
      positional: 'config',
      transport: 'local',
      options: [CONFIG_OPTION, DB_OPTION],
      example: 'homeostat doctor /etc/homeostat/config.yaml',
    },
  },
  safe: {
    summary:
      'drives every GPIO relay to its safe level and exits (systemd ExecStopPost; no database needed: the config file, else the last applied config kept beside the database; MQTT actuators get their safe command only if the broker answers within 2 s; 10 s at most; a daemon started by hand that holds the database keeps its relays)',
    cli: {
      command: 'safe',
      args: '[CONFIG]',
      positional: 'config',
      transport: 'local',
      options: [
        CONFIG_OPTION,
        {
          ...DB_OPTION,
          description:
            'the database whose last applied config (FILE.safe.json) to use (default: as for run; a daemon run with its own --db needs the same here)',
        },
        SYSFS_OPTION,
      ],
      example: 'homeostat safe --config /etc/homeostat/config.yaml',
    },
  },
  init: {
    summary:
      'writes a commented starter config from the hardware found (DS18B20 and kernel IIO/hwmon sensors, GPIO chips); never overwrites a file',
    cli: {
      command: 'init',
      args: '[FILE]',
      positional: 'out',
      transport: 'local',
      options: [
        {
          name: 'out',
          value: 'FILE',
          description:
            'where to write it (default $CONFIGURATION_DIRECTORY/config.yaml, else /etc/homeostat/config.yaml)',
        },
        {
          name: 'sensor',
          value: 'ID|PATH|sim',
          description:
            "the DS18B20 that measures the loop (28-…), a kernel sensor's path as init lists it, or sim",
        },
        { name: 'relay-pin', value: 'N', description: 'the GPIO line (BCM number) of the relay that heats' },
        { name: 'setpoint', value: 'X', description: 'the temperature to hold, °C (default 20)' },
        { name: 'loop', value: 'NAME', description: "the loop's name (default: room)" },
        { name: 'yes', description: 'ask nothing: take the flags, else the first sensor found' },
        SYSFS_OPTION,
      ],
      example: 'sudo homeostat init --sensor 28-0316a2795cff --relay-pin 17 --setpoint 20',
    },
  },
  installService: {
    summary:
      'installs homeostat as a systemd service: user, directories, program, unit, PATH link; validates, runs doctor, starts it',
    cli: {
      command: 'install-service',
      positional: 'none',
      transport: 'local',
      options: [
        {
          ...CONFIG_OPTION,
          description:
            'the config to install as /etc/homeostat/config.yaml when there is none (never overwritten)',
        },
        { name: 'root', value: 'DIR', description: 'install into DIR instead of / (tests, images)' },
        {
          name: 'no-systemctl',
          description: 'change files only: no systemctl daemon-reload, enable or start',
        },
      ],
      example: 'sudo node dist/cli.js install-service --config config/pi-starter.yaml',
    },
  },
  uninstallService: {
    summary:
      'stops and removes the service, its unit, program and PATH link; keeps the config and the database',
    cli: {
      command: 'uninstall-service',
      positional: 'none',
      transport: 'local',
      options: [
        {
          name: 'purge',
          description: 'also delete /etc/homeostat, /var/lib/homeostat and the homeostat user',
        },
        { name: 'root', value: 'DIR', description: 'uninstall from DIR instead of /' },
        { name: 'no-systemctl', description: 'change files only' },
      ],
      example: 'sudo homeostat uninstall-service',
    },
  },
  backup: {
    summary:
      'writes one archive (.tar.gz) while the daemon runs: a consistent snapshot of the database, the config and a manifest; secret files only with --include-secrets',
    cli: {
      command: 'backup',
      args: '[FILE]',
      positional: 'out',
      transport: 'local',
      options: [
        CONFIG_OPTION,
        DB_OPTION,
        {
          name: 'dir',
          value: 'DIR',
          description: 'write it into DIR as homeostat-<node>-<time>.tar.gz (instead of FILE)',
        },
        {
          name: 'keep',
          value: 'N',
          description: "with --dir: keep the node's newest N archives there, delete older ones",
        },
        {
          name: 'include-secrets',
          description: 'also take the files the config names (passwordFile, tokenFile, keyFile…)',
        },
      ],
      example: 'sudo -u homeostat homeostat backup --dir /media/usb/homeostat --keep 14',
    },
  },
  restore: {
    summary:
      'puts a backup in place (refused while a daemon runs on the database), once the whole archive checks out: the database, the config and its secret files (only where that config names them, beside it); what was there is kept as FILE.before-restore-<time>',
    cli: {
      command: 'restore',
      args: 'FILE',
      positional: 'out',
      transport: 'local',
      options: [
        { ...CONFIG_OPTION, description: 'where the config goes (default: as for run)' },
        { ...DB_OPTION, description: 'where the database goes (default: as for run)' },
        { name: 'database-only', description: 'leave the config and the secret files as they are' },
      ],
      example:
        'sudo systemctl stop homeostat && sudo homeostat restore homeostat-cellar-20261204T030000Z.tar.gz && sudo systemctl start homeostat',
    },
  },
  reload: {
    summary:
      "makes the running daemon re-read its config (SIGHUP): systemd's ExecReload, needing nothing beyond node",
    cli: {
      command: 'reload',
      positional: 'none',
      transport: 'local',
      options: [
        {
          name: 'pid',
          value: 'PID',
          required: true,
          description: "the daemon's process ($MAINPID under systemd)",
        },
      ],
      example: 'homeostat reload --pid "$(systemctl show -P MainPID homeostat)"',
    },
  },
} satisfies Record<string, Operation>;
