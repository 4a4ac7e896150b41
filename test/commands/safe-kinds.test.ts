/**
 * Every registered actuator kind's `safe` handling, exercised: the plan `homeostat safe` makes
 * from a config with one actuator of that kind, and the drive against fixture sysfs (or a
 * broker that refuses, for MQTT). The table is keyed by kind, so a kind added to the registry
 * without a case here fails the type-check and the coverage test.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { planFromConfig, type SafePlan, safeCommand } from '../../src/commands/safe.js';
import { parseConfigText } from '../../src/config/load.js';
import { ACTUATOR_KINDS } from '../../src/kinds/registry.js';
import { fakePwmExport } from '../support/fake-kernel.js';
import { type HasAfter, tempTree as supportTree } from '../support/tmp.js';
import { configFile, fakeKernel, pi4, rawLevel } from './safe-fixtures.js';

type KindName = (typeof ACTUATOR_KINDS)[number]['kind'];

interface Drive {
  root: string;
  io?: Parameters<typeof safeCommand>[0]['io'];
  /** After `safe` ran: the hardware at its safe level. */
  check?(): void;
}

interface Case {
  /** The actuator's section, as `actuators.a: …`. */
  section: string;
  /** Extra top-level blocks (the broker). */
  extra?: string;
  plan(plan: SafePlan): void;
  /** The tree `safe` drives and its check. */
  drive(t: HasAfter): Drive;
  /** The report's lines for the actuator. */
  report: RegExp;
  code: number;
}

const REFUSING_BROKER = "mqtt: { url: 'mqtt://127.0.0.1:1' }";
const PWM = 'class/pwm/pwmchip0';

const CASES: Record<KindName, Case> = {
  simulated_relay: {
    section: '{ kind: simulated_relay, plant: p, gain: 10 }',
    plan: (plan) => assert.deepEqual([plan.relays, plan.pwms, plan.mqtt], [[], [], []]),
    drive: () => ({ root: emptyPi() }),
    report: /^homeostat safe: no GPIO relay in the config, nothing to drive$/m,
    code: 0,
  },
  simulated_continuous: {
    section: '{ kind: simulated_continuous, plant: p, gain: 10 }',
    plan: (plan) => assert.deepEqual([plan.relays, plan.pwms, plan.mqtt], [[], [], []]),
    drive: () => ({ root: emptyPi() }),
    report: /^homeostat safe: no GPIO relay in the config, nothing to drive$/m,
    code: 0,
  },
  mqtt_switch: {
    section: '{ kind: mqtt_switch, preset: tasmota, device: plug }',
    extra: REFUSING_BROKER,
    plan: (plan) =>
      assert.deepEqual(plan.mqtt, [
        {
          id: 'a',
          kind: 'mqtt_switch',
          topic: 'cmnd/plug/POWER',
          payload: 'OFF',
          deadMan: 'turns itself off ≤ 600 s after its last ON (Tasmota PulseTime)',
        },
      ]),
    drive: () => ({ root: emptyPi() }),
    report: /^a \(mqtt_switch\): not reached \(broker mqtt:\/\/127\.0\.0\.1:1: .*\); turns itself off/m,
    code: 0,
  },
  mqtt_level: {
    section: '{ kind: mqtt_level, commandTopic: c/l, stateTopic: s/l, safeLevel: 0.5, levelScale: 100 }',
    extra: REFUSING_BROKER,
    plan: (plan) =>
      assert.deepEqual(plan.mqtt, [
        {
          id: 'a',
          kind: 'mqtt_level',
          topic: 'c/l',
          payload: '50',
          deadMan: 'no dead man’s switch: if it was not reached, it stays as it is until homeostat is back',
        },
      ]),
    drive: () => ({ root: emptyPi() }),
    report: /^a \(mqtt_level\): not reached \(.*\); no dead man’s switch/m,
    code: 0,
  },
  gpio_relay: {
    section: '{ kind: gpio_relay, bcm: 17 }',
    plan: (plan) => assert.deepEqual(plan.relays, [{ id: 'a', bcm: 17, activeLow: true, safeLevel: 0 }]),
    drive: () => {
      // Left ON by a killed daemon: active-low, pin low.
      const root = pi4({ 17: { direction: 'out', value: 1, activeLow: 1 } });
      const kernel = fakeKernel(root);
      return { root, io: kernel.io, check: () => assert.equal(rawLevel(root, 17), 1, 'released: pin high') };
    },
    report: /^a \(gpio_relay BCM 17 = sysfs 529, active-low\): was ON \(pin low\), now OFF \(pin high\)$/m,
    code: 0,
  },
  pwm: {
    section: '{ kind: pwm, channel: 0, periodMs: 2000 }',
    plan: (plan) =>
      assert.deepEqual(plan.pwms, [
        { id: 'a', chip: 0, channel: 0, safeLevel: 0, periodNs: 2_000_000_000, polarity: 'normal' },
      ]),
    drive: (t) => {
      // Running at 70 % as a killed daemon left it.
      const root = supportTree(t, {
        [`${PWM}/npwm`]: '1\n',
        [`${PWM}/export`]: '',
        [`${PWM}/unexport`]: '',
        [`${PWM}/pwm0/period`]: '2000000000\n',
        [`${PWM}/pwm0/duty_cycle`]: '1400000000\n',
        [`${PWM}/pwm0/enable`]: '1\n',
        [`${PWM}/pwm0/polarity`]: 'normal\n',
      });
      fakePwmExport(t, root, 0);
      const enabled = () => readFileSync(join(root, PWM, 'pwm0/enable'), 'utf8').trim();
      return { root, check: () => assert.equal(enabled(), '0', 'disabled: level 0') };
    },
    report: /^a \(pwm pwmchip0\/pwm0\): disabled \(duty 0\), its safe state$/m,
    code: 0,
  },
};

/** A Pi with no pin exported: the kinds that drive no pin find nothing to do there. */
function emptyPi(): string {
  return pi4();
}

describe('homeostat safe: every registered actuator kind has its safe handling', () => {
  test('the cases cover every kind of the registry', () => {
    assert.deepEqual(Object.keys(CASES).sort(), ACTUATOR_KINDS.map((kind) => kind.kind).sort());
  });

  test("the level `safe` drives is the one the daemon forces on faults and at shutdown (the kind's safeLevel)", () => {
    const sections = [
      ...Object.values(CASES).map((c) => c.section),
      '{ kind: gpio_relay, bcm: 17, safeState: on }',
      '{ kind: pwm, periodMs: 2000, safeLevel: 1, polarity: inversed }',
    ];
    const compared: string[] = [];
    for (const section of sections) {
      const path = configFile(pi4(), `  a: ${section}`, REFUSING_BROKER);
      const loaded = parseConfigText(readFileSync(path, 'utf8'));
      assert.ok(loaded.ok, loaded.ok ? '' : loaded.errors.join('\n'));
      const actuator = loaded.config.actuators.a!;
      const kind = ACTUATOR_KINDS.find((k) => k.kind === actuator.kind)!;
      const target = (kind.safe as (s: unknown) => ReturnType<typeof kind.safe>)(actuator);
      if (!('safeLevel' in target)) continue;
      const daemonLevel = (kind.safeLevel as (s: unknown) => number)(actuator);
      assert.equal(target.safeLevel, daemonLevel, section);
      compared.push(section);
    }
    assert.ok(compared.length >= 4, `compared: ${compared.join(', ')}`);
  });

  for (const kind of ACTUATOR_KINDS) {
    const c = CASES[kind.kind];
    test(`${kind.kind}: planned from the config as its kind says, and driven safe`, async (t) => {
      const drive = c.drive(t);
      const path = configFile(
        drive.root,
        `  a: ${c.section}`,
        [c.extra ?? '', `gpio: { sysfsRoot: ${JSON.stringify(drive.root)} }`].join('\n'),
      );
      const loaded = parseConfigText(readFileSync(path, 'utf8'));
      assert.ok(loaded.ok, loaded.ok ? '' : loaded.errors.join('\n'));
      c.plan(planFromConfig(loaded.config));
      const lines: string[] = [];
      const push = (line: string) => void lines.push(line);
      const code = await safeCommand(
        { configPath: path, io: drive.io, env: {}, note: push, mqttTimeoutMs: 500, pinTimeoutMs: 2000 },
        push,
      );
      const text = lines.join('\n');
      assert.equal(code, c.code, text);
      assert.match(text, c.report);
      drive.check?.();
    });
  }
});
