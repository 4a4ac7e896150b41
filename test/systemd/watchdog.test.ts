import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LoopStatus } from '../../src/core/status.js';
import type { Condition } from '../../src/core/types.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { type SilentLoop, systemdStatusLine, WatchdogGate } from '../../src/systemd/watchdog.js';

const s = (seconds: number) => seconds * 1000;

/** A notifier that records each message with the clock time it was sent at. */
function recordingNotifier(clock: ManualClock) {
  const sent: Array<{ atS: number; message: string }> = [];
  const record = (message: string) => sent.push({ atS: clock.nowMs() / 1000, message });
  return {
    notifier: {
      ready: () => record('READY=1'),
      watchdog: () => record('WATCHDOG=1'),
      status: (text: string) => record(`STATUS=${text}`),
    },
    sent,
    times: (message: string) => sent.filter((m) => m.message === message).map((m) => m.atS),
  };
}

/** A gate pinging every 30 s, with loops that must cycle every 90 s (3 × a 30 s resync). */
function setup(opts: { pingEveryMs?: number | undefined; loops?: string[]; summary?: () => string } = {}) {
  const clock = new ManualClock();
  const notify = recordingNotifier(clock);
  const withheld: Array<{ atS: number; silent: SilentLoop[] }> = [];
  const gate = new WatchdogGate({
    clock,
    notifier: notify.notifier,
    pingEveryMs: 'pingEveryMs' in opts ? opts.pingEveryMs : s(30),
    statusEveryMs: s(30),
    ...(opts.summary ? { summary: opts.summary } : {}),
    onWithheld: (silent) => withheld.push({ atS: clock.nowMs() / 1000, silent }),
  });
  for (const name of opts.loops ?? ['room', 'garage']) gate.addLoop(name, s(90));
  /** Loop `name` completes a cycle at each of `atS` (seconds of clock time). */
  const succeedAt = (name: string, atS: number[]) => {
    for (const at of atS) clock.setTimer(() => gate.cycleSucceeded(name), s(at) - clock.nowMs());
  };
  return { clock, gate, ...notify, withheld, succeedAt };
}

const every30sUntil = (endS: number) => Array.from({ length: endS / 30 + 1 }, (_, i) => i * 30);

describe('READY=1 after every loop has completed its first cycle', () => {
  test('given two loops, when only one has cycled, then not ready; when both have, READY once', async () => {
    const { clock, gate, succeedAt, times } = setup();
    gate.start();
    succeedAt('room', [1, 31]);
    succeedAt('garage', [4, 34]);
    await clock.advance(s(3));
    assert.equal(gate.ready, false);
    assert.deepEqual(times('READY=1'), []);
    await clock.advance(s(40));
    assert.equal(gate.ready, true);
    assert.deepEqual(times('READY=1'), [4]);
  });

  test('given loops that cycled before start, then READY at start', async () => {
    const { clock, gate, succeedAt, times } = setup();
    succeedAt('room', [0]);
    succeedAt('garage', [0]);
    await clock.advance(s(2));
    assert.deepEqual(times('READY=1'), [], 'not before start: loops may still be added');
    gate.start();
    assert.deepEqual(times('READY=1'), [2]);
  });

  test('given no loops at all, then READY at start', () => {
    const { gate, times } = setup({ loops: [] });
    gate.start();
    assert.deepEqual(times('READY=1'), [0]);
  });

  test('given a loop removed before its first cycle, then it does not hold READY back', async () => {
    const { clock, gate, succeedAt, times } = setup();
    gate.start();
    succeedAt('room', [1]);
    await clock.advance(s(5));
    gate.removeLoop('garage');
    assert.deepEqual(times('READY=1'), [5]);
  });

  test('READY comes with a first ping and the status line, in that order: STATUS, READY, WATCHDOG', async () => {
    const { clock, gate, succeedAt, sent } = setup({ loops: ['room'], summary: () => '1 loop: room' });
    gate.start();
    succeedAt('room', [1]);
    await clock.advance(s(1));
    assert.deepEqual(sent, [
      { atS: 1, message: 'STATUS=1 loop: room' },
      { atS: 1, message: 'READY=1' },
      { atS: 1, message: 'WATCHDOG=1' },
    ]);
  });
});

describe('WATCHDOG=1 only while every loop keeps cycling', () => {
  const cases: Array<{
    name: string;
    room: number[];
    garage: number[];
    pingsAtS: number[];
    withheldAtS: number[];
  }> = [
    {
      name: 'both loops cycle every 30 s → a ping at every tick',
      room: every30sUntil(300).map((t) => t + 1),
      garage: every30sUntil(300).map((t) => t + 2),
      pingsAtS: [2, 30, 60, 90, 120, 150, 180, 210, 240, 270, 300],
      withheldAtS: [],
    },
    {
      name: 'garage hangs after its cycle at 32 s → pings stop once it is silent > 90 s',
      room: every30sUntil(300).map((t) => t + 1),
      garage: [2, 32],
      pingsAtS: [2, 30, 60, 90, 120],
      withheldAtS: [150, 180, 210, 240, 270, 300],
    },
    {
      name: 'garage fails for 80 s (backoff) then recovers → no ping is withheld',
      room: every30sUntil(300).map((t) => t + 1),
      garage: [2, 32, 112, 142, 172, 202, 232, 262, 292],
      pingsAtS: [2, 30, 60, 90, 120, 150, 180, 210, 240, 270, 300],
      withheldAtS: [],
    },
    {
      name: 'room silent 100 s between cycles but never > 90 s at a tick → every ping sent',
      room: [1, 31, 131, 161, 191, 221, 251, 281],
      garage: every30sUntil(300).map((t) => t + 2),
      pingsAtS: [2, 30, 60, 90, 120, 150, 180, 210, 240, 270, 300],
      withheldAtS: [],
    },
    {
      name: 'room silent 140 s then back → withheld at the tick that saw it silent, resumed after',
      room: [1, 31, 171, 201, 231, 261, 291],
      garage: every30sUntil(300).map((t) => t + 2),
      pingsAtS: [2, 30, 60, 90, 120, 180, 210, 240, 270, 300],
      withheldAtS: [150],
    },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const { clock, gate, succeedAt, times, withheld } = setup();
      gate.start();
      succeedAt('room', c.room);
      succeedAt('garage', c.garage);
      await clock.advance(s(300));
      assert.deepEqual(times('WATCHDOG=1'), c.pingsAtS);
      assert.deepEqual(
        withheld.map((w) => w.atS),
        c.withheldAtS,
      );
    });
  }

  test('a withheld ping names the silent loop, for the log and for systemctl status', async () => {
    const { clock, gate, succeedAt, withheld, sent } = setup({ summary: () => 'all fine' });
    gate.start();
    succeedAt(
      'room',
      every30sUntil(150).map((t) => t + 1),
    );
    succeedAt('garage', [2, 32]);
    await clock.advance(s(150));
    assert.deepEqual(withheld, [
      { atS: 150, silent: [{ name: 'garage', silentMs: s(118), maxSilenceMs: s(90) }] },
    ]);
    assert.equal(sent.at(-1)?.message, 'STATUS=watchdog withheld: no successful cycle from garage (118 s)');
  });

  test('a loop added after READY gets its max silence from when it was added', async () => {
    const { clock, gate, succeedAt, times } = setup({ loops: ['room'] });
    gate.start();
    succeedAt(
      'room',
      every30sUntil(300).map((t) => t + 1),
    );
    await clock.advance(s(100));
    gate.addLoop('cellar', s(90));
    await clock.advance(s(200));
    // cellar never cycles: silent > 90 s from t=100 from the tick at 210 on.
    assert.deepEqual(times('WATCHDOG=1'), [1, 30, 60, 90, 120, 150, 180]);
  });

  test('given no watchdog (pingEveryMs undefined), then READY and STATUS but never WATCHDOG=1', async () => {
    let n = 0;
    const { clock, gate, succeedAt, times, sent } = setup({
      pingEveryMs: undefined,
      summary: () => `n=${n++}`,
    });
    gate.start();
    succeedAt('room', [1]);
    succeedAt('garage', [2]);
    await clock.advance(s(60));
    assert.deepEqual(times('READY=1'), [2]);
    assert.deepEqual(times('WATCHDOG=1'), []);
    assert.deepEqual(
      sent.filter((m) => m.message.startsWith('STATUS=')).map((m) => m.atS),
      [2, 30, 60],
      'at READY, then at every 30 s tick (the summary changes each time)',
    );
  });

  test('given no watchdog, when a loop is silent, then STATUS= says so and nothing is withheld', async () => {
    const { clock, gate, succeedAt, sent, withheld } = setup({ pingEveryMs: undefined, summary: () => 'ok' });
    gate.start();
    succeedAt(
      'room',
      every30sUntil(150).map((t) => t + 1),
    );
    succeedAt('garage', [2]);
    await clock.advance(s(150));
    assert.deepEqual(withheld, []);
    assert.deepEqual(
      sent.filter((m) => m.message.startsWith('STATUS=no')),
      [
        { atS: 120, message: 'STATUS=no successful cycle from garage (118 s)' },
        { atS: 150, message: 'STATUS=no successful cycle from garage (148 s)' },
      ],
    );
  });

  test('after stop, no more pings or READY', async () => {
    const { clock, gate, succeedAt, times } = setup();
    gate.start();
    succeedAt('room', every30sUntil(300));
    succeedAt('garage', every30sUntil(300));
    await clock.advance(s(45));
    gate.stop();
    gate.stop();
    await clock.advance(s(255));
    assert.deepEqual(times('WATCHDOG=1'), [0, 30]);
    assert.equal(clock.pendingTimers(), 0);
  });
});

describe('STATUS= is sent when it changes', () => {
  test('an unchanged summary is not resent; a changed one is', async () => {
    const lines = ['a', 'a', 'a', 'b', 'b'];
    let i = 0;
    const { clock, gate, succeedAt, sent } = setup({ loops: ['room'], summary: () => lines[i++] ?? 'b' });
    gate.start();
    succeedAt('room', every30sUntil(120));
    await clock.advance(s(120));
    assert.deepEqual(
      sent.filter((m) => m.message.startsWith('STATUS=')),
      [
        { atS: 0, message: 'STATUS=a' },
        { atS: 90, message: 'STATUS=b' },
      ],
    );
  });

  test('a summary that throws becomes a status line and the ping is still sent', async () => {
    const { clock, gate, succeedAt, sent, times } = setup({
      loops: ['room'],
      summary: () => {
        throw new Error('no status yet');
      },
    });
    gate.start();
    succeedAt('room', [0, 20]);
    await clock.advance(s(30));
    assert.equal(sent[0]?.message, 'STATUS=status unavailable: no status yet');
    assert.deepEqual(times('WATCHDOG=1'), [0, 30]);
  });
});

describe('WatchdogGate options', () => {
  const clock = new ManualClock();
  const notifier = { ready: () => undefined, watchdog: () => undefined, status: () => undefined };
  for (const pingEveryMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
    test(`pingEveryMs ${pingEveryMs} is rejected`, () =>
      assert.throws(() => new WatchdogGate({ clock, notifier, pingEveryMs }), RangeError));
  }
  test('a loop with maxSilenceMs 0 is rejected', () => {
    const gate = new WatchdogGate({ clock, notifier, pingEveryMs: 1000 });
    assert.throws(() => gate.addLoop('room', 0), /maxSilenceMs/);
  });
});

function loopStatus(loop: string, fields: Partial<LoopStatus> = {}): LoopStatus {
  return {
    loop,
    quantity: 'temperature',
    mode: 'heat',
    setpoint: 20,
    measured: 20.06,
    measuredAtMs: 0,
    output: 0.4,
    action: 'heating',
    generation: 1,
    observedGeneration: 1,
    actuators: {},
    conditions: [],
    updatedAtMs: 0,
    ...fields,
  };
}

describe('systemdStatusLine', () => {
  const units: Record<string, string> = { room: '°C', cellar: '°C', air: '%' };
  const unitOf = (loop: string) => units[loop] ?? '';
  const faulted: Condition = {
    type: 'Faulted',
    status: 'True',
    reason: 'SensorStale',
    message: 'stale',
    lastTransitionMs: 0,
    observedGeneration: 1,
  };
  const cases: Array<[string, LoopStatus[], string]> = [
    ['no loops', [], '0 loops'],
    ['one loop', [loopStatus('room')], '1 loop: room 20.1/20 °C heating'],
    [
      'three loops, one without a reading and faulted, one without a unit',
      [
        loopStatus('room'),
        loopStatus('air', { measured: undefined, setpoint: 55, action: 'off', conditions: [faulted] }),
        loopStatus('pump', { measured: 3, setpoint: 2.5, action: 'idle' }),
      ],
      '3 loops: room 20.1/20 °C heating, air —/55 % off FAULT, pump 3.0/2.5 idle',
    ],
  ];
  for (const [name, statuses, expected] of cases) {
    test(name, () => assert.equal(systemdStatusLine(statuses, unitOf), expected));
  }
});
