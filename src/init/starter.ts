/**
 * The text of a starter config: version 1, commented block by block, in the shape of the
 * examples in config/. Pure: the same plan always gives the same text, which is how
 * config/pi-starter.yaml is kept equal to what `homeostat init` writes (test/init/).
 *
 * Values are interpolated only after the parsers in plan.ts accepted them (ids, addresses and
 * numbers need no YAML quoting); a sysfs root, a free-form path, is written JSON-quoted.
 */
import { describePin } from './pins.js';
import {
  type HardwarePlan,
  type PlannedProbe,
  ROOM_CUTOFF_MAX_C,
  ROOM_LIMITS_C,
  SERVICE_DB_PATH,
  type SimPlan,
  type StarterPlan,
} from './plan.js';

/** The config text for `plan`, ending in a newline. */
export function renderStarter(plan: StarterPlan): string {
  const lines = plan.kind === 'hardware' ? hardwareLines(plan) : simLines(plan);
  return `${lines.join('\n')}\n`;
}

/** `living_room` → `Living room`. */
function titleOf(loop: string): string {
  const words = loop.replace(/_+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function nodeLines(plan: StarterPlan): string[] {
  return [
    '# Who this homeostat is. The id is part of every MQTT topic (homeostat/<id>/...) and of the',
    '# Home Assistant device: keep it unique among the homeostats on one broker. From the host name.',
    'node:',
    `  id: ${plan.nodeId}`,
    '',
  ];
}

const MQTT_LINES = [
  '# MQTT (Home Assistant, phone apps) is off until you name a broker, e.g. Mosquitto on this Pi:',
  '# mqtt:',
  '#   url: mqtt://127.0.0.1:1883',
  '#   username: homeostat',
  '#   passwordFile: /etc/homeostat/mqtt-password # one line, readable by the homeostat user only',
  '# The dashboard and API are on by default at http://127.0.0.1:8734, on this machine only.',
  '',
];

/** The loop block both starters share: setpoint, limits, the effect watch and the cut-off. */
function loopLines(plan: StarterPlan, controller: string[]): string[] {
  const { loop } = plan;
  return [
    'loops:',
    `  ${loop}:`,
    `    name: ${titleOf(loop)}`,
    `    sensor: ${loop}_temp`,
    `    raise: ${loop}_heater # only a heater, so the modes are off and heat`,
    `    setpoint: ${plan.setpointC} # °C; MQTT, Home Assistant and the dashboard change it at run time`,
    '    # The setpoints anyone may ask for (this file, MQTT, Home Assistant, the dashboard), °C.',
    `    limits: { min: ${ROOM_LIMITS_C.min}, max: ${ROOM_LIMITS_C.max} }`,
    '    # Effect watch (thermal protection): half an hour of full heating must warm the room by',
    '    # 0.5 °C, else the heater is latched off until someone resets the fault (the dashboard,',
    `    # Home Assistant, or MQTT homeostat/${plan.nodeId}/${loop}/fault/reset). It catches a heater`,
    "    # that is unplugged or broken, a relay that does not close, a probe that isn't in the room.",
    '    # A heater too small for a hard frost trips it too: then raise periodS or lower minChange.',
    '    effectWatch: { periodS: 1800, minChange: 0.5 }',
    `    # Cut-off: the heater is never on at ${ROOM_CUTOFF_MAX_C} °C or above (a relay that does not release,`,
    '    # a wrong setpoint); reaching it with the heater on latches it off until reset. A room',
    '    # warmed by the sun with the heater off trips nothing. Keep it above limits.max.',
    `    cutoff: { max: ${ROOM_CUTOFF_MAX_C} }`,
    ...controller,
  ];
}

function hardwareLines(plan: HardwarePlan): string[] {
  const { loop } = plan;
  const pin = describePin(plan.relayBcm);
  return [
    `# A room heated through a relay on a Raspberry Pi: a homeostat starter written by \`homeostat init\`.`,
    '#',
    '# Hardware it needs:',
    ...sensorNeedsLines(plan),
    `# - one relay board channel on ${pin}, switching the heater.`,
    '# Pins are BCM numbers (the GPIO17 of pinout diagrams), not header pin numbers.',
    '#',
    '# Check it with `homeostat validate` and `homeostat doctor` (doctor reads the probe and checks',
    '# the relay pin; give the file as their argument if it is not /etc/homeostat/config.yaml),',
    '# then run it as a service: `sudo homeostat install-service`.',
    '',
    'version: 1',
    '',
    ...nodeLines(plan),
    ...storageLines(SERVICE_DB_PATH),
    ...MQTT_LINES,
    ...gpioLines(plan),
    'sensors:',
    `  ${loop}_temp:`,
    ...sensorLines(plan),
    '',
    'actuators:',
    `  ${loop}_heater:`,
    '    kind: gpio_relay',
    `    bcm: ${plan.relayBcm} # ${pin}`,
    '    # Most opto-isolated relay boards switch on when the pin is low. If yours switches on a high',
    '    # pin (the heater runs while homeostat says off), write false here.',
    '    activeLow: true',
    '    windowS: 600 # PID output 0.3 = 3 minutes on in every 10',
    '    minOnS: 60 # spare the relay contacts and the heater',
    '    minOffS: 60',
    '    safeState: off # on faults, stale readings and shutdown',
    '',
    ...loopLines(plan, [
      '    controller:',
      '      type: pid',
      '      kp: 0.5 # 50 % heater per °C below the setpoint',
      '      tiS: 1800 # integral time, s: removes the offset heat losses would leave',
      '      # Or switch on and off like a classic thermostat (replace the three lines above):',
      '      # type: hysteresis',
      '      # coldTolerance: 0.3 # on at 0.3 °C below the setpoint',
      '      # hotTolerance: 0.3 # off at 0.3 °C above it',
    ]),
  ];
}

/** What the sensor needs, for the header. */
function sensorNeedsLines(plan: HardwarePlan): string[] {
  if (plan.sensor.kind !== 'file_value') {
    return [
      '# - one DS18B20 temperature probe on the 1-Wire bus: data on GPIO4 (header pin 7) with a 4.7 kΩ',
      '#   pull-up to 3.3 V, and `dtoverlay=w1-gpio` in /boot/firmware/config.txt (then reboot);',
    ];
  }
  const { driver, place } = plan.sensor.channel;
  return [
    `# - the ${driver} temperature sensor at ${place}, read through the kernel's own driver (its`,
    '#   dtoverlay line in /boot/firmware/config.txt: docs/kernel-sensors.md has one per sensor);',
  ];
}

/** The sensor's keys under its id: a DS18B20, or a kernel channel as a file_value sensor. */
function sensorLines(plan: HardwarePlan): string[] {
  if (plan.sensor.kind !== 'file_value') {
    return [
      '    kind: ds18b20',
      ...addressLines(plan.sensor),
      '    periodS: 10 # one conversion takes ~0.75 s',
      '    # A room never reads outside this: such a reading is a broken or misplaced probe, and the',
      '    # loop goes safe (heater off). CRC errors, the 85 °C power-on value and jumps are rejected',
      '    # too; once readings are stale (30 s) the heater is off.',
      '    plausible: { min: -20, max: 60 }',
    ];
  }
  const { channel } = plan.sensor;
  const reading = 'value' in channel.reading ? `${channel.reading.value} ${channel.unit}` : 'no reading';
  return [
    '    kind: file_value',
    `    # ${channel.driver} (${channel.place}) ${channel.channel}: ${reading} when init ran. The * stands`,
    '    # for the iio:deviceN / hwmonN number, which can change between boots; the bus address does not.',
    `    path: ${JSON.stringify(channel.configPath)}`,
    `    scale: ${channel.scale} # milli °C → °C`,
    '    periodS: 10 # a failed read keeps the last reading until it is stale (30 s): heater off then',
    '    # A room never reads outside this: such a reading is a broken or misplaced sensor, and the',
    '    # loop goes safe (heater off).',
    '    plausible: { min: -20, max: 60 }',
  ];
}

/** The probe's address: written, commented (the only probe), or a note that none was found. */
function addressLines(sensor: PlannedProbe): string[] {
  const { address, pinned } = sensor;
  if (address === undefined) {
    return [
      '    # No probe was found when init ran: the only 28-... device on the bus is used. With several',
      '    # probes, name one (ls /sys/bus/w1/devices):',
      '    # address: 28-0316a2795bff',
    ];
  }
  if (pinned) return [`    address: ${address} # this probe (ls /sys/bus/w1/devices)`];
  return [
    '    # The only probe on the bus is used, so a replaced probe needs no edit. With several probes',
    '    # on the bus, name this one:',
    `    # address: ${address}`,
  ];
}

/** gpio.sysfsRoot only when init scanned another root (a test tree, an image being prepared). */
function gpioLines(plan: HardwarePlan): string[] {
  if (plan.sysfsRoot === undefined) {
    return [
      '# The BCM → sysfs GPIO numbering is detected from /sys/class/gpio/gpiochip*/label and base',
      '# (512 on a Pi 4 with Bookworm, 571 on a Pi 5). Set it only if `homeostat doctor` says so:',
      '# gpio:',
      '#   base: 512',
      '',
    ];
  }
  return [
    '# init scanned this tree instead of /sys (--sysfs-root): pins and probes are looked up there.',
    'gpio:',
    `  sysfsRoot: ${JSON.stringify(plan.sysfsRoot)}`,
    '',
  ];
}

/** The storage block: where the service keeps its database. */
function storageLines(path: string): string[] {
  return [
    '# Where the service keeps its database (install-service creates /var/lib/homeostat); the',
    '# command line reads it from here too, so `homeostat status` and `history` need no --db.',
    'storage:',
    `  path: ${path}`,
    '',
  ];
}

function simLines(plan: SimPlan): string[] {
  const { loop } = plan;
  return [
    '# A simulated room, nothing to wire up: a homeostat starter written by `homeostat init`.',
    '#',
    '# Hardware it needs: none. A room model stands in for the probe and the heater, so',
    '# `homeostat run --config FILE` regulates it anywhere, and `--speed 60` runs an hour a minute;',
    '# the dashboard is at http://127.0.0.1:8734. For a Raspberry Pi with one DS18B20 probe and one',
    '# relay board, run `homeostat init` on the Pi once they are connected (config/pi-starter.yaml',
    '# is what it writes).',
    '',
    'version: 1',
    '',
    ...nodeLines(plan),
    ...(plan.storagePath === undefined ? [] : storageLines(plan.storagePath)),
    ...MQTT_LINES,
    'simulation:',
    '  plants:',
    `    # A room heated by a radiator: left alone it cools to 10 °C, with a time constant of an`,
    "    # hour and two minutes before the radiator's warmth reaches the thermometer.",
    `    ${loop}:`,
    '      kind: thermal',
    '      ambient: 10',
    '      timeConstantS: 3600',
    '      deadTimeS: 120',
    '      noise: 0.02 # sensor noise, °C standard deviation',
    '      quantization: 0.0625 # a DS18B20 reads in steps of 1/16 °C',
    '',
    'sensors:',
    `  ${loop}_temp:`,
    '    kind: simulated',
    `    plant: ${loop}`,
    '    periodS: 10 # a reading older than 30 s counts as missing: heater off',
    '',
    'actuators:',
    `  ${loop}_heater:`,
    '    kind: simulated_relay',
    `    plant: ${loop}`,
    '    gain: 20 # fully on, the room would settle 20 °C above the 10 °C ambient',
    '    windowS: 300 # PID output 0.3 = on for 90 s of every 5 minutes',
    '    minOnS: 60',
    '    minOffS: 60',
    '    safeState: off # on faults, stale readings and shutdown',
    '',
    ...loopLines(plan, [
      '    controller:',
      '      type: pid',
      '      # SIMC tuning from the model (gain 20, time constant 3600 s, dead time 120 s).',
      '      kp: 0.75 # 75 % heater per °C below the setpoint',
      '      tiS: 960 # integral time, s: removes the offset heat losses would leave',
      '      tdS: 40 # derivative time, s: brakes before the dead time makes it overshoot',
    ]),
  ];
}
