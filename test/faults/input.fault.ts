import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { describe, type TestContext, test } from 'node:test';
import type YAML from 'yaml';
import { sleep } from '../integration/helpers.js';
import {
  BASE,
  faultConfigText,
  faultResetTopic,
  LOOPS,
  nextRequestId,
  resultTopic,
  setpointTopic,
  setTopic,
  stateTopic,
} from './support/config.js';
import {
  liveHeapBytes,
  measureFrom,
  openProbeWindow,
  probeSamples,
  rssOf,
  startProbedDaemon,
  windowFigures,
} from './support/daemon.js';
import { desiredRows, integrity, lastEventId } from './support/db.js';
import { reportFigures } from './support/figures.js';
import { hostileCorpus } from './support/hostile.js';
import { condition, TestMqtt } from './support/mqtt.js';
import { checkReplaysRefused, latchingRoom } from './support/retained.js';
import {
  actuatorLines,
  assertFreshlyReconciled,
  openScenario,
  Resources,
  scenarioPlace,
  startRegulating,
  Verdicts,
} from './support/scenario.js';

/**
 * "Input cannot exhaust the daemon" and "Commands mean what they meant when sent":
 * hostile payloads on the command topics, one oversized message, a 20,000-command flood,
 * Home Assistant birth messages by the thousand, and retained commands replayed at a restart.
 * The daemon runs as a child process (`homeostat run --speed 60`, demo config) with the probe
 * preloaded; a private Mosquitto carries the traffic, published by this process.
 */

const SPEED = 60;
/** The flood: 20,000 rejected commands. */
const FLOOD = Number(process.env.HOMEOSTAT_FAULT_FLOOD ?? 20_000);
/**
 * The target is an event-loop delay p99 under 50 ms during the flood; the figure is printed
 * (and quoted in docs/reliability.md). The check is twice that, a safety bound rather than a timing: it
 * still fails the stalls this guards against (15 s before the fixes) without failing a slower
 * CI machine on scheduling noise.
 */
const FLOOD_P99_MS = 100;
/** One oversized message (a 250 MB one was reported; this is enough to show it reaching the daemon). */
const OVERSIZED_BYTES = 64 * 1024 * 1024;
/** Generous bound on RSS growth from the oversized message once settled, bytes. */
const RSS_GROWTH_BOUND = 48 * 1024 * 1024;
/**
 * After the flood: the live heap (measured right after a full GC) must be back at its level —
 * nothing kept — within this, bytes. RSS is
 * reported and bounded more loosely (FLOOD_RSS_GROWTH_BOUND): V8 and malloc keep pages they
 * grew into for a while after a burst, and gave back 15–20 MB of them within 30 s in
 * `npm run bench:mqtt-flood`. Before the fixes the same flood took RSS to 821 MB.
 */
const FLOOD_HEAP_GROWTH_BOUND = 16 * 1024 * 1024;
const FLOOD_RSS_GROWTH_BOUND = 96 * 1024 * 1024;
/** Above this a payload may be dropped by the broker (MQTT 5 maximumPacketSize): no result required. */
const MAY_BE_DROPPED_BYTES = 1024;

async function startDaemonWithBroker(t: TestContext, prefix: string, edit?: (doc: YAML.Document) => void) {
  const res = new Resources(t);
  const place = await scenarioPlace(res, prefix, ['homeassistant/#']);
  writeFileSync(
    place.configPath,
    faultConfigText({ brokerUrl: place.broker.url, ...(edit ? { edit } : {}) }),
  );
  const daemon = await startRegulating(res, place, { speed: SPEED });
  return { res, ...place, daemon };
}

describe('hostile input on the command topics', () => {
  test('≥ 1,000 hostile payloads (oversized, binary, invalid UTF-8, built-in loop ids, duplicate keys, NaN/Infinity/1e999, deep JSON, huge numbers): all refused, nothing changed, still regulating', {
    timeout: 180_000,
  }, async (t) => {
    const { client, dbPath, daemon } = await startDaemonWithBroker(t, 'homeostat-fault-hostile-');
    const v = new Verdicts();
    const corpus = hostileCorpus(LOOPS);
    assert.ok(corpus.length >= 1_000, `${corpus.length} payloads`);
    const desiredBefore = desiredRows(dbPath);
    const eventsBefore = lastEventId(dbPath);
    const rssBeforeBytes = rssOf(daemon.run.child.pid);
    const measured = await measureFrom(daemon);
    const startedAtMs = Date.now();

    // When each is published and its result awaited (results come in order per loop)
    const accepted: string[] = [];
    const unanswered: string[] = [];
    let dropped = 0;
    let misses = 0;
    for (const hostile of corpus) {
      if (daemon.run.exitStatus) break;
      const mayBeDropped = hostile.payload.byteLength > MAY_BE_DROPPED_BYTES;
      const result = await client.command(
        `${BASE}/${hostile.loop}/${hostile.kind}`,
        hostile.payload,
        resultTopic(hostile.loop),
        {
          // A daemon that drops some (today: built-in loop ids) must not cost the full wait each time.
          timeoutMs: mayBeDropped ? 500 : misses > 3 ? 300 : 2_000,
          // QoS 0: no PUBACK round trip per payload (loopback to a private broker loses nothing).
          publish: { qos: 0 },
        },
      );
      if (!result) {
        if (mayBeDropped) dropped += 1;
        else {
          unanswered.push(`${hostile.loop}/${hostile.kind}: ${hostile.label}`);
          misses += 1;
        }
        continue;
      }
      if (result.accepted)
        accepted.push(`${hostile.loop}/${hostile.kind}: ${hostile.label} → ${JSON.stringify(result)}`);
    }
    const endedAtMs = Date.now();
    const stall = measured();

    // Then none was accepted, every one small enough to arrive was answered, nothing changed
    v.check('the daemon survives every payload', () =>
      assert.equal(daemon.run.exitStatus, undefined, `exited: ${daemon.run.stderr.slice(-2_000)}`),
    );
    v.check('no hostile payload accepted', () =>
      assert.deepEqual(accepted.slice(0, 20), [], `${accepted.length} accepted`),
    );
    v.check('every payload that reached the daemon answered', () =>
      assert.deepEqual(unanswered.slice(0, 20), [], `${unanswered.length} unanswered`),
    );
    v.check('desired state unchanged', () => assert.deepEqual(desiredRows(dbPath), desiredBefore));
    v.check('integrity', () => assert.deepEqual(integrity(dbPath), ['ok']));
    // And the daemon still takes a good command and regulates
    await v.checkAsync('a valid command afterwards is accepted and applied', async () => {
      const requestId = nextRequestId('after-hostile');
      const result = await client.command(
        setTopic('room'),
        JSON.stringify({ setpoint: 21, requestId }),
        resultTopic('room'),
        {
          requestId,
        },
      );
      assert.equal(result?.accepted, true, JSON.stringify(result));
      await client.state(stateTopic('room'), (s) => s.setpoint === 21, { timeoutMs: 5_000 });
    });
    for (const loop of LOOPS) {
      v.check(`${loop} still publishes reconciled states`, () => assertFreshlyReconciled(client, loop));
    }
    reportFigures(t, {
      scenario: `${corpus.length} hostile payloads`,
      ...stall,
      rssBeforeBytes,
      rssAfterBytes: rssOf(daemon.run.child.pid),
      rowsWritten: safe(() => lastEventId(dbPath) - eventsBefore),
      notes: `${accepted.length} accepted, ${unanswered.length} unanswered, ${dropped} oversized not delivered, in ${Math.round((endedAtMs - startedAtMs) / 1000)} s; ${actuatorLines(daemon.run, startedAtMs).length} actuator writes meanwhile`,
    });
    v.settle();
  });

  test(`one ${OVERSIZED_BYTES / 1_048_576} MB message on a command topic never reaches the daemon's memory`, {
    timeout: 120_000,
  }, async (t) => {
    const { client, dbPath, daemon } = await startDaemonWithBroker(t, 'homeostat-fault-oversized-');
    const v = new Verdicts();
    await sleep(1_000);
    const rssBeforeBytes = rssOf(daemon.run.child.pid)!;
    const measured = await measureFrom(daemon);
    const sentAtMs = Date.now();
    await client.publish(setpointTopic('room'), Buffer.alloc(OVERSIZED_BYTES, 0x32), { qos: 0 });
    await sleep(4_000);
    const samples = probeSamples(daemon.probePath, sentAtMs, Date.now());
    const stall = measured();
    const peakRssBytes = Math.max(rssBeforeBytes, ...samples.map((s) => s.rssBytes));
    v.check('the daemon survives', () => assert.equal(daemon.run.exitStatus, undefined));
    v.check(`peak RSS grows less than ${RSS_GROWTH_BOUND / 1_048_576} MB`, () =>
      assert.ok(
        peakRssBytes - rssBeforeBytes < RSS_GROWTH_BOUND,
        `RSS ${Math.round(rssBeforeBytes / 1_048_576)} → peak ${Math.round(peakRssBytes / 1_048_576)} MB`,
      ),
    );
    await v.checkAsync('still regulating: a valid command is accepted', async () => {
      const requestId = nextRequestId('after-oversized');
      const result = await client.command(
        setTopic('room'),
        JSON.stringify({ setpoint: 21.5, requestId }),
        resultTopic('room'),
        {
          requestId,
        },
      );
      assert.equal(result?.accepted, true, JSON.stringify(result));
    });
    reportFigures(t, {
      scenario: `one ${OVERSIZED_BYTES / 1_048_576} MB command`,
      ...stall,
      rssBeforeBytes,
      rssAfterBytes: peakRssBytes,
      rowsWritten: safe(() => lastEventId(dbPath)),
      notes: 'RSS after = peak within 4 s of the message',
    });
    v.settle();
  });

  test(`a flood of ${FLOOD} rejected commands: bounded rows, p99 under ${FLOOD_P99_MS} ms, live heap back, still regulating`, {
    timeout: 240_000,
  }, async (t) => {
    const { client, dbPath, daemon } = await startDaemonWithBroker(t, 'homeostat-fault-flood-');
    const v = new Verdicts();
    await sleep(2_000);
    const rssBeforeBytes = rssOf(daemon.run.child.pid)!;
    const heapBeforeBytes = (await liveHeapBytes(daemon)) ?? Number.NaN;
    const eventsBefore = lastEventId(dbPath);
    const results = { count: 0, lastAtMs: 0 };
    const resultTopics = new Set(LOOPS.map(resultTopic));
    client.client.on('message', (topic) => {
      if (!resultTopics.has(topic)) return;
      results.count += 1;
      results.lastAtMs = Date.now();
    });
    // The room's states during the flood: the longest gap between two says whether status stalled
    const stateArrivals: number[] = [];
    client.client.on('message', (topic) => {
      if (topic === stateTopic('room')) stateArrivals.push(Date.now());
    });

    // When 20,000 rejected commands (out of limits, not numbers, bad JSON) arrive as fast as the
    // broker takes them
    await openProbeWindow(daemon);
    const startedAtMs = Date.now();
    const payloads = ['99', 'abc', '{"setpoint":1e999}', '-5'];
    for (let i = 0; i < FLOOD; i++) {
      const loop = LOOPS[i % LOOPS.length]!;
      const payload = payloads[i % payloads.length]!;
      const topic = payload.startsWith('{') ? setTopic(loop) : setpointTopic(loop);
      void client.publish(topic, payload, { qos: 0 });
      if (i % 500 === 499) await new Promise((resolve) => setImmediate(resolve));
    }
    const sentAtMs = Date.now();
    // … and are answered (or the answers stop coming)
    let last = -1;
    while (results.count < FLOOD && results.count !== last) {
      last = results.count;
      await sleep(2_000);
    }
    // The flood lasts until its last answer (the wait above adds up to 2 s of quiet)
    const floodEndedAtMs = Math.max(results.lastAtMs, sentAtMs);
    const stall = windowFigures(daemon.probePath, floodEndedAtMs + 150);
    await sleep(10_000); // settle: memory given back after the flood
    const rssAfterBytes = rssOf(daemon.run.child.pid);
    const heapAfterBytes = (await liveHeapBytes(daemon)) ?? Number.NaN;
    const rowsWritten = safe(() => lastEventId(dbPath) - eventsBefore);
    const duringFlood = stateArrivals.filter((at) => at >= startedAtMs && at <= floodEndedAtMs);
    const longestStateGapMs = Math.max(
      0,
      ...duringFlood.map((at, i) => at - (i === 0 ? startedAtMs : duringFlood[i - 1]!)),
      floodEndedAtMs - (duringFlood.at(-1) ?? startedAtMs),
    );
    const peakRssBytes = Math.max(
      ...probeSamples(daemon.probePath, startedAtMs, floodEndedAtMs).map((s) => s.rssBytes),
      0,
    );
    reportFigures(t, {
      scenario: `flood of ${FLOOD} rejected commands`,
      ...stall,
      rssBeforeBytes,
      rssAfterBytes,
      rowsWritten,
      notes:
        `${results.count} results; sent in ${sentAtMs - startedAtMs} ms, answered by ${floodEndedAtMs - startedAtMs} ms; ` +
        `peak RSS ${Math.round(peakRssBytes / 1_048_576)} MB; live heap ${Math.round(heapBeforeBytes / 1_048_576)} → ${Math.round(heapAfterBytes / 1_048_576)} MB; ` +
        `longest gap between room states ${longestStateGapMs} ms`,
    });

    // Then the daemon stayed responsive, wrote a bounded number of rows, and gave memory back
    v.check('the daemon survives', () => assert.equal(daemon.run.exitStatus, undefined));
    v.check(`event-loop p99 under ${FLOOD_P99_MS} ms`, () =>
      assert.ok(stall.p99DelayMs < FLOOD_P99_MS, `${stall.p99DelayMs} ms`),
    );
    v.check('rejected-command events coalesced (fewer than 1,000 rows for the flood)', () =>
      assert.ok(rowsWritten !== undefined && rowsWritten < 1_000, `${rowsWritten} rows`),
    );
    v.check(
      `live heap (after a full GC) back within ${FLOOD_HEAP_GROWTH_BOUND / 1_048_576} MB of before`,
      () =>
        assert.ok(
          heapAfterBytes - heapBeforeBytes < FLOOD_HEAP_GROWTH_BOUND,
          `${Math.round(heapBeforeBytes / 1_048_576)} → ${Math.round(heapAfterBytes / 1_048_576)} MB`,
        ),
    );
    v.check(`RSS within ${FLOOD_RSS_GROWTH_BOUND / 1_048_576} MB of before`, () =>
      assert.ok(
        rssAfterBytes !== undefined && rssAfterBytes - rssBeforeBytes < FLOOD_RSS_GROWTH_BOUND,
        `${Math.round(rssBeforeBytes / 1_048_576)} → ${Math.round((rssAfterBytes ?? 0) / 1_048_576)} MB`,
      ),
    );
    v.check('states kept coming (no gap over 5 s)', () =>
      assert.ok(longestStateGapMs < 5_000, `${longestStateGapMs} ms`),
    );
    v.check('every command answered', () => assert.equal(results.count, FLOOD));
    for (const loop of LOOPS) {
      v.check(`${loop} still publishes reconciled states`, () => assertFreshlyReconciled(client, loop));
    }
    v.check('integrity', () => assert.deepEqual(integrity(dbPath), ['ok']));
    v.settle();
  });

  test('2,000 Home Assistant birth messages: discovery republished a bounded number of times', {
    timeout: 120_000,
  }, async (t) => {
    const { client, daemon } = await startDaemonWithBroker(t, 'homeostat-fault-birth-');
    const v = new Verdicts();
    await sleep(1_500);
    const discovery = (m: { topic: string }) =>
      m.topic.startsWith('homeassistant/') && m.topic !== 'homeassistant/status';
    const ownTraffic = () => client.received.filter((m) => m.topic !== 'homeassistant/status');
    const bytesOf = (list: { payload: Buffer }[]) => list.reduce((sum, m) => sum + m.payload.byteLength, 0);

    // Given what one birth message costs
    const oneFromIdx = client.received.length;
    await client.publish('homeassistant/status', 'online', { qos: 0 });
    await sleep(1_500);
    const one = client.received.slice(oneFromIdx).filter((m) => m.topic !== 'homeassistant/status');
    const oneDiscovery = one.filter(discovery).length;

    // When 2,000 arrive at once
    const rssBeforeBytes = rssOf(daemon.run.child.pid);
    const fromIdx = client.received.length;
    const measured = await measureFrom(daemon);
    const _startedAtMs = Date.now();
    for (let i = 0; i < 2_000; i++) {
      void client.publish('homeassistant/status', 'online', { qos: 0 });
      if (i % 500 === 499) await new Promise((resolve) => setImmediate(resolve));
    }
    await sleep(5_000);
    const flood = client.received.slice(fromIdx).filter((m) => m.topic !== 'homeassistant/status');
    const floodDiscovery = flood.filter(discovery).length;
    reportFigures(t, {
      scenario: '2,000 HA birth messages',
      ...measured(),
      rssBeforeBytes,
      rssAfterBytes: rssOf(daemon.run.child.pid),
      notes: `one birth: ${one.length} publishes (${bytesOf(one)} B); 2,000: ${flood.length} publishes (${bytesOf(flood)} B), ${floodDiscovery} discovery; ${ownTraffic().length} messages in all`,
    });

    // Then the republish was debounced: a handful of discovery publishes, not 2,000
    v.check('a birth message republishes discovery', () => assert.ok(oneDiscovery >= 1, `${oneDiscovery}`));
    v.check('2,000 birth messages republish discovery at most 5 times', () =>
      assert.ok(floodDiscovery <= 5 * Math.max(1, oneDiscovery), `${floodDiscovery} discovery publishes`),
    );
    v.check('the daemon survives', () => assert.equal(daemon.run.exitStatus, undefined));
    v.settle();
  });
});

describe('retained commands', () => {
  test('a retained fault/reset and retained setpoints are refused at restart: the latch holds, the heater stays off, the retained messages are cleared', {
    timeout: 120_000,
  }, async (t) => {
    const scenario = await openScenario(t, 'homeostat-fault-retained-');
    const { res, v, broker, client, dir, configPath, dbPath } = scenario;
    // The room's heater barely warms it (gain 0.5 °C): full output without effect latches
    // "heating ineffective" after 3 s. The finding: at the next start the broker replays
    // retained commands (retain flag set), which cleared the latch (heater back on) and
    // re-applied old setpoints over newer commands. Real time (speed 1): a scaled clock starts
    // afresh at each run, which would put the stored latch in the new run's future.
    writeFileSync(
      configPath,
      faultConfigText({
        brokerUrl: broker.url,
        edit: latchingRoom,
      }),
    );
    let daemon = await startRegulating(res, scenario, { speed: 1, name: 'first' });

    // Given commands someone published with the retain flag while the daemon ran: delivered
    // live, they applied then (a reset with nothing latched, setpoints 25 and 21) …
    await client.publish(faultResetTopic('room'), 'reset', { qos: 1, retain: true });
    await client.publish(setpointTopic('room'), '25', { qos: 1, retain: true });
    await client.publish(setTopic('fermenter'), JSON.stringify({ setpoint: 21, requestId: 'retained-1' }), {
      qos: 1,
      retain: true,
    });
    // … then newer commands without it (22 and 19), and later a latched fault
    for (const [loop, setpoint] of [
      ['room', 22],
      ['fermenter', 19],
    ] as const) {
      const requestId = nextRequestId('newer');
      const result = await client.command(
        setTopic(loop),
        JSON.stringify({ setpoint, requestId }),
        resultTopic(loop),
        {
          requestId,
        },
      );
      assert.equal(result?.accepted, true, JSON.stringify(result));
    }
    await client.state(
      stateTopic('room'),
      (s) => condition(s, 'Faulted')?.reason === 'LatchedHeatingIneffective',
      { timeoutMs: 30_000, what: 'room latched HeatingIneffective' },
    );
    await sleep(500);
    await daemon.run.kill('SIGKILL');
    const desiredBefore = desiredRows(dbPath);
    assert.equal(desiredBefore.get('room')?.setpoint, 22);

    // When the daemon restarts and subscribes (the broker replays them with the retain flag)
    const restartedAtMs = Date.now();
    daemon = startProbedDaemon({ configPath, dbPath, speed: 1, dir, name: 'second' });
    res.daemon(daemon.run);

    await daemon.run.waitForLine(/^homeostat regulating/, 30_000);
    const measured = await measureFrom(daemon);
    await sleep(2_000); // shorter than the effect watch: a cleared latch would not be back yet

    // Then each is refused with a result saying why, and changes nothing
    const { results, heaterOn } = checkReplaysRefused(
      v,
      { client, run: daemon.run },
      { loops: ['room', 'fermenter'], sinceMs: restartedAtMs, count: 3 },
    );
    v.check('desired state unchanged', () => assert.deepEqual(desiredRows(dbPath), desiredBefore));
    // And the retained messages are gone from the broker
    const fresh = await TestMqtt.connect(broker.url, [
      faultResetTopic('room'),
      setpointTopic('room'),
      setTopic('fermenter'),
    ]);
    await sleep(1_000);
    const stillRetained = fresh.received
      .filter((m) => m.retain && m.payload.byteLength > 0)
      .map((m) => m.topic);
    await fresh.end();
    v.check('retained commands cleared', () => assert.deepEqual(stillRetained, []));
    reportFigures(t, {
      scenario: 'retained fault/reset and setpoints at restart',
      ...measured(),
      rssAfterBytes: rssOf(daemon.run.child.pid),
      notes: `${heaterOn.length} heater ON after restart; ${results.filter((r) => !r.accepted).length}/3 refused; ${stillRetained.length} still retained`,
    });
    v.settle();
  });
});

function safe<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}
