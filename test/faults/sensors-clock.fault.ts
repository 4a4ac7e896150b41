import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import type YAML from 'yaml';
import { type CliProcess, type LogLine, sleep } from '../integration/helpers.js';
import { faultConfigText, stateTopic } from './support/config.js';
import { measureFrom, rssOf, stepClock } from './support/daemon.js';
import { reportFigures } from './support/figures.js';
import { condition, type TestMqtt } from './support/mqtt.js';
import { openScenario, startRegulating } from './support/scenario.js';

/**
 * "Sensor values and time": a NaN or infinite reading sends the heater to its safe
 * state at once (not when the reading goes stale, 180 s later for an MQTT sensor), and wall
 * clock steps forward and back latch no false fault. Both at --speed 1: the real clock, as on
 * real hardware. The room's thermometer is an MQTT sensor this process publishes to; its
 * heater a simulated relay with a long minimum on-time, which a safe state must override.
 */

const ROOM_TOPIC = 'test/room/temperature';
const CHAMBER_TOPIC = 'test/chamber/SENSOR';
/** "At once": generous bound on the heater's OFF after a non-finite reading, ms. */
const AT_ONCE_MS = 2_000;

/** The demo with the room and the chamber read over MQTT (room: plain number; chamber: Tasmota JSON). */
function mqttSensorConfig(brokerUrl: string, extra?: (doc: YAML.Document) => void): string {
  return faultConfigText({
    brokerUrl,
    edit: (doc) => {
      // periodS 60 → stale after 180 s: the exposure of the finding
      doc.setIn(['sensors', 'room_mqtt'], { kind: 'mqtt', topic: ROOM_TOPIC, periodS: 60 });
      doc.setIn(['sensors', 'chamber_mqtt'], {
        kind: 'mqtt',
        topic: CHAMBER_TOPIC,
        field: 'AM2301.Temperature',
        periodS: 60,
      });
      doc.setIn(['loops', 'room', 'sensor'], 'room_mqtt');
      doc.setIn(['loops', 'fermenter', 'sensor'], 'chamber_mqtt');
      doc.deleteIn(['sensors', 'room_temp']);
      doc.deleteIn(['sensors', 'chamber_temp']);
      // A long minimum on-time: a safe state must not wait for it
      doc.setIn(['actuators', 'room_heater', 'minOnS'], 120);
      doc.setIn(['actuators', 'room_heater', 'minOffS'], 0);
      doc.setIn(['actuators', 'chamber_heater', 'minOnS'], 120);
      doc.setIn(['actuators', 'chamber_heater', 'minOffS'], 0);
      extra?.(doc);
    },
  });
}

/** The first log line matching `re` printed at index `fromIdx` or later (now or to come). */
function nextLine(run: CliProcess, re: RegExp, fromIdx: number, timeoutMs: number): Promise<LogLine> {
  return run.waitForLine((line) => re.test(line.msg) && run.lines.indexOf(line) >= fromIdx, timeoutMs);
}

describe('sensor values and time', () => {
  test('a NaN or infinite reading turns the heater off at once, for plain and JSON MQTT payloads', {
    timeout: 180_000,
  }, async (t) => {
    const scenario = await openScenario(t, 'homeostat-fault-nan-');
    const { res, v, broker, client, configPath } = scenario;
    writeFileSync(configPath, mqttSensorConfig(broker.url));
    const daemon = await startRegulating(res, scenario, { speed: 1, loops: ['room', 'fermenter'] });
    const rssBeforeBytes = rssOf(daemon.run.child.pid);

    const measured = await measureFrom(daemon);
    const cases: { topic: string; heater: string; good: string; bad: string; label: string }[] = [
      ...['NaN', 'nan', 'Infinity', '-Infinity', '1e999'].map((bad) => ({
        topic: ROOM_TOPIC,
        heater: 'room_heater',
        good: '5',
        bad,
        label: `plain ${bad}`,
      })),
      ...['"NaN"', '"Infinity"', '1e999', '-1e999', 'null'].map((bad) => ({
        topic: CHAMBER_TOPIC,
        heater: 'chamber_heater',
        good: '{"AM2301":{"Temperature":5}}',
        bad: `{"AM2301":{"Temperature":${bad}}}`,
        label: `JSON ${bad}`,
      })),
    ];
    const timings: string[] = [];
    let worstMs: number | undefined = 0;
    for (const c of cases) {
      // Given the heater on: a cold reading (5 °C, setpoint 18–20)
      const onFrom = daemon.run.lines.length;
      await client.publish(c.topic, c.good, { qos: 0 });
      const on =
        isOn(daemon.run.lines, c.heater) ||
        (await nextLine(daemon.run, new RegExp(`^${c.heater} → ON`), onFrom, 10_000).then(
          () => true,
          () => false,
        ));
      if (!on) {
        v.check(`${c.label}: heater on before the bad reading`, () =>
          assert.fail('heater never switched on'),
        );
        continue;
      }
      await sleep(300);
      // When the sensor reports a non-finite value
      const offFrom = daemon.run.lines.length;
      const sentAtMs = Date.now();
      await client.publish(c.topic, c.bad, { qos: 0 });
      // Then the heater goes off at once (bounded wait: today it stays on for 180 s)
      const off = await nextLine(
        daemon.run,
        new RegExp(`^${c.heater} → OFF`),
        offFrom,
        AT_ONCE_MS + 3_000,
      ).catch(() => undefined);
      const tookMs = off ? off.time - sentAtMs : undefined;
      timings.push(`${c.label} ${tookMs === undefined ? 'never' : `${tookMs} ms`}`);
      worstMs = tookMs === undefined || worstMs === undefined ? undefined : Math.max(worstMs, tookMs);
      v.check(`${c.label}: heater off within ${AT_ONCE_MS} ms`, () =>
        assert.ok(tookMs !== undefined && tookMs <= AT_ONCE_MS, `took ${tookMs ?? 'more than 5000'} ms`),
      );
    }
    const room = client.latestState(stateTopic('room'));
    reportFigures(t, {
      scenario: 'NaN / infinite readings',
      timeToSafeMs: worstMs,
      ...measured(),
      rssBeforeBytes,
      rssAfterBytes: rssOf(daemon.run.child.pid),
      notes: `${cases.length} bad readings, heater off after: ${timings.join('; ')}; room SensorHealthy ${condition(room, 'SensorHealthy')?.reason ?? '?'}`,
    });
    v.settle();
  });

  test('wall-clock steps of 2 h forward and back latch no false fault and keep regulating', {
    timeout: 120_000,
  }, async (t) => {
    const scenario = await openScenario(t, 'homeostat-fault-clock-');
    const { res, v, broker, client, configPath } = scenario;
    // A heating watch of 10 minutes: real time here is seconds, so only a clock step can trip it.
    writeFileSync(
      configPath,
      mqttSensorConfig(broker.url, (doc) =>
        doc.setIn(['loops', 'room', 'effectWatch'], { periodS: 600, minChange: 1 }),
      ),
    );
    const daemon = await startRegulating(res, scenario, { speed: 1, loops: ['room'], steppableClock: true });
    // A fresh cold reading every 500 ms (the daemon stamps them on arrival), alternating 15 and
    // 15.5 °C so that every cycle publishes a new state: its arrival shows the loop cycling.
    let feeds = 0;
    const feeder = setInterval(() => {
      feeds += 1;
      void client.publish(ROOM_TOPIC, feeds % 2 === 0 ? '15' : '15.5', { qos: 0 }).catch(() => undefined);
    }, 500);
    res.add(() => clearInterval(feeder));
    await waitHeaterOn(daemon.run, client, 'room_heater', 10_000);
    const rssBeforeBytes = rssOf(daemon.run.child.pid);

    const measured = await measureFrom(daemon);
    const steps: { label: string; offsetMs: number }[] = [
      { label: 'forward 2 h', offsetMs: 2 * 3_600_000 },
      { label: 'back 2 h (to real time)', offsetMs: 0 },
      { label: 'back 2 h (before real time)', offsetMs: -2 * 3_600_000 },
      { label: 'forward 2 h (to real time)', offsetMs: 0 },
    ];
    const outcomes: string[] = [];
    for (const step of steps) {
      const fromIdx = daemon.run.lines.length;
      await stepClock(daemon, step.offsetMs);
      await sleep(4_000);
      const after = daemon.run.lines.slice(fromIdx);
      const latched = after.filter((l) => /latch/i.test(l.msg));
      const offs = after.filter((l) => /^room_heater → OFF/.test(l.msg));
      const faulted = condition(client.latestState(stateTopic('room')), 'Faulted');
      // The daemon's own idea of the time (its state's updatedAt) shows the step took effect.
      const seenOffsetS = Math.round(
        (Date.parse(client.latestState(stateTopic('room'))?.updatedAt ?? '') - Date.now()) / 1000,
      );
      outcomes.push(
        `${step.label} (daemon clock ${seenOffsetS} s off): ${offs.length} heater OFF, Faulted ${faulted?.reason ?? '?'}`,
      );
      v.check(`${step.label}: the step reached the daemon`, () =>
        assert.ok(
          Math.abs(seenOffsetS * 1000 - step.offsetMs) < 10_000,
          `daemon clock ${seenOffsetS} s off real time`,
        ),
      );
      v.check(`${step.label}: no fault latched`, () => {
        assert.deepEqual(
          latched.map((l) => l.msg),
          [],
        );
        assert.ok(!faulted?.reason.startsWith('Latched'), JSON.stringify(faulted));
      });
      v.check(`${step.label}: the heater stays on (the room is still cold)`, () =>
        assert.deepEqual(
          offs.map((l) => l.msg),
          [],
        ),
      );
      v.check(`${step.label}: the daemon runs`, () => assert.equal(daemon.run.exitStatus, undefined));
      v.check(`${step.label}: still regulating (a fresh, healthy state in the last second)`, () => {
        const latest = client.latestStateMessage(stateTopic('room'));
        assert.ok(
          latest && Date.now() - latest.atMs < 1_500,
          `last state ${latest ? Date.now() - latest.atMs : '–'} ms ago`,
        );
        assert.equal(
          condition(latest.state, 'SensorHealthy')?.status,
          'True',
          JSON.stringify(condition(latest.state, 'SensorHealthy')),
        );
      });
    }
    reportFigures(t, {
      scenario: 'wall clock stepped ±2 h',
      ...measured(),
      rssBeforeBytes,
      rssAfterBytes: rssOf(daemon.run.child.pid),
      notes: outcomes.join('; '),
    });
    v.settle();
  });
});

function isOn(lines: readonly LogLine[], heater: string): boolean {
  const last = [...lines].reverse().find((l) => l.msg.startsWith(`${heater} → `));
  return last?.msg.startsWith(`${heater} → ON`) ?? false;
}

async function waitHeaterOn(run: CliProcess, client: TestMqtt, heater: string, timeoutMs: number) {
  if (isOn(run.lines, heater)) return;
  await nextLine(run, new RegExp(`^${heater} → ON`), 0, timeoutMs).catch((error) => {
    throw new Error(
      `${heater} never switched on: ${(error as Error).message.slice(0, 300)}\n${JSON.stringify(client.latestState(stateTopic('room')))}`,
    );
  });
}
