/**
 * What each command accepts and says about itself: `homeostat <command> --help`, the options a
 * command takes (others are refused with one line naming its help), and whether a positional
 * argument is a loop or the config file. src/cli.ts parses with it.
 */

export type PositionalKind = 'loop' | 'loop-version' | 'loop-action' | 'config' | 'out' | 'none';

export interface CommandHelp {
  /** One line: what it does. */
  summary: string;
  usage: string;
  /** The options it takes, as `--name`, each with its meaning. */
  options: Record<string, string>;
  example: string;
  /**
   * A positional argument: the loop (set, history), the loop and one value (tuning, preset), the
   * loop, an action and a name (profile), the config file (validate, plan, …), the file to write
   * (init), or none.
   */
  positional: PositionalKind;
}

const CONFIG =
  '--config FILE   the config (default $CONFIGURATION_DIRECTORY/config.yaml, else /etc/homeostat/config.yaml)';
const DB =
  "--db FILE       the database, read directly (default: the config's storage.path, else $STATE_DIRECTORY/homeostat.db, else ./var/homeostat.db)";
const API = "--api-url URL   the daemon's API (default: the config's http block, else http://127.0.0.1:8734)";

const option = (line: string): [string, string] => {
  const name = line.split(/\s+/)[0] ?? '';
  return [name, line];
};
const options = (...lines: string[]) => Object.fromEntries(lines.map(option));

export const COMMANDS: Record<string, CommandHelp> = {
  run: {
    summary: 'runs the daemon: regulates every loop of the config until SIGINT/SIGTERM',
    usage:
      'homeostat run [CONFIG] [--config FILE] [--db FILE] [--mqtt-url URL] [--speed N] [--http-port N|off] [--log-format json|pretty|journal]',
    options: options(
      CONFIG,
      '--db FILE       the database (default: storage.path, else $STATE_DIRECTORY/homeostat.db, else ./var/homeostat.db)',
      "--mqtt-url URL  the broker, instead of the config's mqtt.url",
      '--speed N       the clock N× faster (simulated drivers only)',
      '--http-port N   the API and dashboard on another port (0: any free one), or off',
      '--log-format F  json, pretty or journal (default: pretty on a terminal, journal under systemd, else json)',
    ),
    example: 'homeostat run --config config/demo.yaml --speed 60',
    positional: 'config',
  },
  validate: {
    summary: 'checks a config file: one "path: message" line per problem (exit 1), or "valid"',
    usage: 'homeostat validate [CONFIG] [--config FILE]',
    options: options(CONFIG),
    example: 'homeostat validate config/demo.yaml',
    positional: 'config',
  },
  plan: {
    summary:
      'what applying the config would change versus the one the daemon applied last (exit 0 none, 2 changes)',
    usage: 'homeostat plan [CONFIG] [--config FILE] [--db FILE]',
    options: options(CONFIG, DB),
    example: 'homeostat plan /etc/homeostat/config.yaml',
    positional: 'config',
  },
  status: {
    summary: "every loop's desired and observed state, from the running daemon (else the database)",
    usage: 'homeostat status [--json] [--config FILE] [--api-url URL] [--db FILE]',
    options: options('--json          the loops as JSON', CONFIG, API, DB),
    example: 'homeostat status --json | jq ".[] | {loop, measured, setpoint}"',
    positional: 'none',
  },
  history: {
    summary: "a loop's measured value, setpoint, output and action over time",
    usage: 'homeostat history LOOP [--since 2h] [--csv] [--config FILE] [--api-url URL] [--db FILE]',
    options: options(
      '--since D       how far back (90m, 6h, 7d; default 2h)',
      '--csv           as CSV',
      CONFIG,
      API,
      DB,
    ),
    example: 'homeostat history room --since 24h --csv > room.csv',
    positional: 'loop',
  },
  events: {
    summary: 'the recorded events: configs applied, setpoint and mode changes, switches, faults',
    usage: 'homeostat events [--since 2h] [--loop LOOP] [--json] [--config FILE] [--api-url URL] [--db FILE]',
    options: options(
      '--since D       how far back (90m, 6h, 7d)',
      '--loop LOOP     one loop only',
      '--json          as JSON',
      CONFIG,
      API,
      DB,
    ),
    example: 'homeostat events --loop room --since 6h',
    positional: 'none',
  },
  set: {
    summary: "changes a loop's setpoint or mode through the daemon and prints its answer",
    usage: 'homeostat set LOOP [--setpoint X] [--mode M] [--config FILE] [--api-url URL] [--mqtt-url URL]',
    options: options(
      "--setpoint X    the new setpoint (within the loop's limits)",
      '--mode M        the new mode (off, heat, cool, heat_cool, humidify, dehumidify, auto: as the loop allows)',
      CONFIG,
      API,
      "--mqtt-url URL  the broker, when the daemon's API does not answer",
    ),
    example: 'homeostat set room --setpoint 21.5',
    positional: 'loop',
  },
  plot: {
    summary: "a loop's history as an SVG picture: measured value, setpoint, output and events",
    usage: 'homeostat plot LOOP --out FILE.svg [--since 6h] [--config FILE] [--api-url URL] [--db FILE]',
    options: options(
      '--out FILE      the SVG to write (overwritten; - for stdout)',
      '--since D       how far back (90m, 6h, 7d; default 6h)',
      CONFIG,
      API,
      DB,
    ),
    example: 'homeostat plot room --since 24h --out room.svg',
    positional: 'loop',
  },
  autotune: {
    summary:
      "tunes a PID loop's gains in the running daemon: switches its heater (cooler…) on and off around the setpoint, fits a model, proposes gains; follows the run",
    usage:
      'homeostat autotune LOOP [--side raise|lower] [--closed-loop 60s] [--max-duration 6h] [--no-wait] [--cancel] [--config FILE] [--api-url URL]',
    options: options(
      '--side S          raise (the heater, humidifier) or lower (the cooler…): needed in heat_cool and auto',
      '--closed-loop D   the closed-loop time constant the gains aim at (SIMC τc; default the identified dead time)',
      "--max-duration D  the run's time limit (default the loop's autotune.maxDurationS, else 48h)",
      '--no-wait         return once the daemon accepted the request (progress in homeostat status)',
      '--cancel          stop the running autotune of LOOP',
      CONFIG,
      API,
    ),
    example: 'homeostat autotune room --max-duration 12h',
    positional: 'loop',
  },
  tunings: {
    summary:
      "a loop's stored tunings (PID gains from autotune or by hand), newest first, the one in force marked",
    usage: 'homeostat tunings LOOP [--json] [--config FILE] [--api-url URL] [--db FILE]',
    options: options("--json          as JSON (the API's answer)", CONFIG, API, DB),
    example: 'homeostat tunings room',
    positional: 'loop',
  },
  tuning: {
    summary:
      "puts a stored tuning in force through the daemon: VERSION (restore), latest (accept the newest), config (the file's gains)",
    usage: 'homeostat tuning LOOP VERSION|latest|config [--config FILE] [--api-url URL]',
    options: options(CONFIG, API),
    example: 'homeostat tuning room latest',
    positional: 'loop-version',
  },
  preset: {
    summary:
      "selects one of the loop's presets (loops.<id>.presets) through the daemon, or none (the setpoint stays)",
    usage: 'homeostat preset LOOP NAME|none [--config FILE] [--api-url URL]',
    options: options(CONFIG, API),
    example: 'homeostat preset living eco',
    positional: 'loop-version',
  },
  profile: {
    summary:
      "starts one of the loop's profiles (loops.<id>.profiles) through the daemon, or pauses, resumes or stops it",
    usage: 'homeostat profile LOOP start NAME|pause|resume|stop [--config FILE] [--api-url URL]',
    options: options(CONFIG, API),
    example: 'homeostat profile fermenter start ale',
    positional: 'loop-action',
  },
  doctor: {
    summary: 'checks GPIO, 1-Wire, the broker, the database, the HTTP port and systemd; says how to fix each',
    usage: 'homeostat doctor [CONFIG] [--config FILE] [--db FILE]',
    options: options(CONFIG, DB),
    example: 'homeostat doctor /etc/homeostat/config.yaml',
    positional: 'config',
  },
  safe: {
    summary:
      'drives every GPIO relay to its safe level and exits (systemd ExecStopPost; no database needed: the config file, else the last applied config kept beside the database; 10 s at most; a daemon started by hand that holds the database keeps its relays)',
    usage: 'homeostat safe [CONFIG] [--config FILE] [--db FILE] [--sysfs-root DIR]',
    options: options(
      CONFIG,
      '--db FILE       the database whose last applied config (FILE.safe.json) to use (default: as --db above; a daemon run with its own --db needs the same here)',
      '--sysfs-root DIR  where sysfs is (default /sys)',
    ),
    example: 'homeostat safe --config /etc/homeostat/config.yaml',
    positional: 'config',
  },
  init: {
    summary:
      'writes a commented starter config from the hardware found (DS18B20 and kernel IIO/hwmon sensors, GPIO chips); never overwrites a file',
    usage:
      'homeostat init [FILE] [--out FILE] [--sensor ADDRESS|PATH|sim] [--relay-pin N] [--setpoint X] [--loop NAME] [--yes] [--sysfs-root DIR]',
    options: options(
      '--out FILE      where to write it (default $CONFIGURATION_DIRECTORY/config.yaml, else /etc/homeostat/config.yaml)',
      "--sensor ID     the DS18B20 that measures the loop (28-…), a kernel sensor's path as init lists it, or sim",
      '--relay-pin N   the GPIO line (BCM number) of the relay that heats',
      '--setpoint X    the temperature to hold, °C (default 20)',
      "--loop NAME     the loop's name (default: room)",
      '--yes           ask nothing: take the flags, else the first sensor found',
      '--sysfs-root DIR  where sysfs is (default /sys)',
    ),
    example: 'sudo homeostat init --sensor 28-0316a2795cff --relay-pin 17 --setpoint 20',
    positional: 'out',
  },
  'install-service': {
    summary:
      'installs homeostat as a systemd service: user, directories, program, unit, PATH link; validates, runs doctor, starts it',
    usage: 'homeostat install-service [--config FILE] [--root DIR] [--no-systemctl]',
    options: options(
      '--config FILE   the config to install as /etc/homeostat/config.yaml when there is none (never overwritten)',
      '--root DIR      install into DIR instead of / (tests, images)',
      '--no-systemctl  change files only: no systemctl daemon-reload, enable or start',
    ),
    example: 'sudo node dist/cli.js install-service --config config/pi-starter.yaml',
    positional: 'none',
  },
  'uninstall-service': {
    summary:
      'stops and removes the service, its unit, program and PATH link; keeps the config and the database',
    usage: 'homeostat uninstall-service [--purge] [--root DIR] [--no-systemctl]',
    options: options(
      '--purge         also delete /etc/homeostat, /var/lib/homeostat and the homeostat user',
      '--root DIR      uninstall from DIR instead of /',
      '--no-systemctl  change files only',
    ),
    example: 'sudo homeostat uninstall-service',
    positional: 'none',
  },
  reload: {
    summary:
      "makes the running daemon re-read its config (SIGHUP): systemd's ExecReload, needing nothing beyond node",
    usage: 'homeostat reload --pid PID',
    options: options("--pid PID       the daemon's process ($MAINPID under systemd)"),
    example: 'homeostat reload --pid "$(systemctl show -P MainPID homeostat)"',
    positional: 'none',
  },
};

/** How many positional arguments each kind takes at most. */
const POSITIONALS_AT_MOST: Record<PositionalKind, number> = {
  loop: 1,
  'loop-version': 2,
  'loop-action': 3,
  config: 1,
  out: 1,
  none: 0,
};

/** `homeostat <command> --help`. */
export function commandHelp(name: string, help: CommandHelp): string {
  const lines = [
    `homeostat ${name} — ${help.summary}`,
    '',
    `Usage: ${help.usage}`,
    '',
    'Options:',
    ...Object.values(help.options).map((line) => `  ${line}`),
    '  --help          this text',
    '',
    `Example: ${help.example}`,
  ];
  return lines.join('\n');
}

/**
 * The one-line message for arguments a command does not take, naming its help; undefined when
 * they are fine. `given` are the option names as typed (`--speed`).
 */
export function argumentProblem(
  name: string,
  help: CommandHelp,
  given: readonly string[],
  positionals: readonly string[],
): string | undefined {
  const refused = given.find((option) => !Object.hasOwn(help.options, option));
  if (refused !== undefined) {
    return `homeostat ${name}: ${refused} is not an option of ${name} (see homeostat ${name} --help)`;
  }
  const most = POSITIONALS_AT_MOST[help.positional];
  if (positionals.length > most) {
    const extra = positionals[most]!;
    return `homeostat ${name}: unexpected argument "${extra}" (see homeostat ${name} --help)`;
  }
  return undefined;
}

/** One line for what Node's argument parser refused, naming the command's help. */
export function parseProblem(name: string, error: unknown): string {
  const { code, message } = error as { code?: string; message?: string };
  const flag = /'(--?[\w-]+)/.exec(message ?? '')?.[1];
  const see = `(see homeostat ${name} --help)`;
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && flag)
    return `homeostat ${name}: unknown option ${flag} ${see}`;
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && flag)
    return `homeostat ${name}: ${flag} needs a value ${see}`;
  return `homeostat ${name}: ${message ?? String(error)}`;
}
