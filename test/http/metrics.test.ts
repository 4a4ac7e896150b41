import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import type { LoopStatus } from '../../src/core/status.js';
import type { Condition } from '../../src/core/types.js';
import { NodeMetrics, UNKNOWN_LOOP_LABEL } from '../../src/http/metrics.js';
import { LogLevel, recordingLogger } from '../support/logger.js';

/** parse-prometheus-text-format is CommonJS without types: its output as prom2json shapes it. */
interface Sample {
  value?: string;
  labels?: Record<string, string>;
  buckets?: Record<string, string>;
  count?: string;
  sum?: string;
}
interface Family {
  name: string;
  help: string;
  type: string;
  metrics: Sample[];
}
const parsePrometheus = createRequire(import.meta.url)('parse-prometheus-text-format') as (
  text: string,
) => Family[];

async function scrape(metrics: NodeMetrics): Promise<Family[]> {
  return parsePrometheus(await metrics.render());
}

function family(families: Family[], name: string): Family | undefined {
  return families.find((f) => f.name === name);
}

/** The samples of `name` whose labels include `labels`. */
function samples(families: Family[], name: string, labels: Record<string, string> = {}): Sample[] {
  return (family(families, name)?.metrics ?? []).filter((sample) =>
    Object.entries(labels).every(([key, value]) => sample.labels?.[key] === value),
  );
}

/** The one value of `name` with `labels`; undefined when the series is absent. */
function value(families: Family[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples(families, name, labels);
  assert.ok(found.length <= 1, `${name} ${JSON.stringify(labels)}: ${found.length} series`);
  return found[0] === undefined ? undefined : Number(found[0].value);
}

/**
 * One loop's histogram. parse-prometheus-text-format handles unlabelled histograms only (it
 * merges every labelled series' buckets into one sample and drops labelled `_count`/`_sum`), so
 * the family's lines for `loop` are parsed alone, without their loop label.
 */
function histogram(text: string, name: string, loop: string): Sample | undefined {
  const label = `loop="${loop}"`;
  const lines = text
    .split('\n')
    .filter(
      (line) => line.startsWith(`# TYPE ${name} `) || (line.startsWith(`${name}_`) && line.includes(label)),
    )
    .map((line) => line.replace(`,${label}`, '').replace(`{${label}}`, '').replace(`{${label},`, '{'));
  // The parser drops a family's last sample unless the text ends with a newline.
  return family(parsePrometheus(`${lines.join('\n')}\n`), name)?.metrics[0];
}

function condition(type: Condition['type'], status: Condition['status']): Condition {
  return { type, status, reason: 'Test', message: 'test', lastTransitionMs: 0, observedGeneration: 1 };
}

function status(loop: string, overrides: Partial<LoopStatus> = {}): LoopStatus {
  return {
    loop,
    quantity: 'temperature',
    mode: 'heat',
    setpoint: 21,
    measured: 20.5,
    measuredAtMs: 1_000,
    output: 0.25,
    action: 'heating',
    generation: 3,
    observedGeneration: 2,
    actuators: { heater: { wanted: 1, observed: 1 } },
    conditions: [
      condition('SensorHealthy', 'True'),
      condition('Converged', 'False'),
      condition('Faulted', 'False'),
      condition('Reconciled', 'True'),
    ],
    updatedAtMs: 1_000,
    ...overrides,
  };
}

const units: Record<string, string> = { greenhouse: '°C', cellar: '%' };
const unitOf = (loop: string) => units[loop] ?? '';

function nodeMetrics(nodeId = 'node-a'): NodeMetrics {
  return new NodeMetrics({ nodeId, version: '9.9.9', collectProcess: false, unitOf });
}

/** Two loops after a cycle each, a few durations and commands. */
function twoLoops(): NodeMetrics {
  const metrics = nodeMetrics();
  metrics.loopStatus(status('greenhouse'));
  metrics.loopStatus(
    status('cellar', {
      quantity: 'humidity',
      setpoint: 70,
      measured: 75,
      output: -1,
      generation: 7,
      observedGeneration: 7,
      conditions: [
        condition('SensorHealthy', 'False'),
        condition('Converged', 'Unknown'),
        condition('Faulted', 'True'),
      ],
    }),
  );
  metrics.cycleDuration('greenhouse', 0.5);
  metrics.cycleDuration('greenhouse', 3);
  metrics.cycleDuration('cellar', 400);
  metrics.command('mqtt', 'greenhouse', true);
  metrics.command('mqtt', 'greenhouse', true);
  metrics.command('http', 'greenhouse', false, 'setpoint 99 is above the maximum 35');
  metrics.command('http', 'cellar', true);
  return metrics;
}

describe('NodeMetrics', () => {
  describe('given two loops after loopStatus, cycleDuration and command', () => {
    it('exports each loop’s gauges with its labels', async () => {
      const m = await scrape(twoLoops());
      const table: [string, Record<string, string>, number][] = [
        ['homeostat_loop_measured', { loop: 'greenhouse', unit: '°C' }, 20.5],
        ['homeostat_loop_setpoint', { loop: 'greenhouse', unit: '°C' }, 21],
        ['homeostat_loop_output', { loop: 'greenhouse' }, 0.25],
        ['homeostat_loop_faulted', { loop: 'greenhouse' }, 0],
        ['homeostat_loop_generation', { loop: 'greenhouse' }, 3],
        ['homeostat_loop_observed_generation', { loop: 'greenhouse' }, 2],
        ['homeostat_loop_measured', { loop: 'cellar', unit: '%' }, 75],
        ['homeostat_loop_setpoint', { loop: 'cellar', unit: '%' }, 70],
        ['homeostat_loop_output', { loop: 'cellar' }, -1],
        ['homeostat_loop_faulted', { loop: 'cellar' }, 1],
        ['homeostat_loop_generation', { loop: 'cellar' }, 7],
        ['homeostat_loop_observed_generation', { loop: 'cellar' }, 7],
      ];
      for (const [name, labels, expected] of table) {
        assert.equal(value(m, name, labels), expected, `${name} ${JSON.stringify(labels)}`);
      }
    });

    it('exports conditions as 1 True, 0 False, -1 Unknown', async () => {
      const m = await scrape(twoLoops());
      const table: [string, string, number][] = [
        ['greenhouse', 'SensorHealthy', 1],
        ['greenhouse', 'Converged', 0],
        ['greenhouse', 'Reconciled', 1],
        ['cellar', 'SensorHealthy', 0],
        ['cellar', 'Converged', -1],
        ['cellar', 'Faulted', 1],
      ];
      for (const [loop, type, expected] of table) {
        assert.equal(value(m, 'homeostat_loop_condition', { loop, type }), expected, `${loop} ${type}`);
      }
      assert.equal(samples(m, 'homeostat_loop_condition', { loop: 'cellar' }).length, 3);
    });

    it('exports cycle durations as a histogram in seconds', async () => {
      const text = await twoLoops().render();
      const name = 'homeostat_cycle_duration_seconds';
      assert.equal(family(parsePrometheus(text), name)?.type, 'HISTOGRAM');
      const greenhouse = histogram(text, name, 'greenhouse');
      assert.equal(Number(greenhouse?.count), 2);
      assert.ok(Math.abs(Number(greenhouse?.sum) - 0.0035) < 1e-12);
      const table: [string, Sample | undefined, string, number][] = [
        ['greenhouse', greenhouse, '0.0001', 0],
        ['greenhouse', greenhouse, '0.0005', 1],
        ['greenhouse', greenhouse, '0.005', 2],
        ['cellar', histogram(text, name, 'cellar'), '0.25', 0],
        ['cellar', histogram(text, name, 'cellar'), '0.5', 1],
        ['cellar', histogram(text, name, 'cellar'), '+Inf', 1],
      ];
      for (const [loop, sample, le, expected] of table) {
        assert.equal(Number(sample?.buckets?.[le]), expected, `${loop} le=${le}`);
      }
    });

    it('counts commands by source, loop and result, the refusal text not being a label', async () => {
      const m = await scrape(twoLoops());
      const table: [string, string, string, number | undefined][] = [
        ['mqtt', 'greenhouse', 'accepted', 2],
        ['http', 'greenhouse', 'rejected', 1],
        ['http', 'cellar', 'accepted', 1],
        ['mqtt', 'cellar', 'accepted', undefined],
      ];
      for (const [source, loop, result, expected] of table) {
        assert.equal(value(m, 'homeostat_commands_total', { source, loop, result }), expected);
      }
      for (const sample of samples(m, 'homeostat_commands_total')) {
        assert.deepEqual(Object.keys(sample.labels ?? {}).sort(), ['loop', 'result', 'source']);
      }
    });

    it('names the node and version once, in homeostat_node_info', async () => {
      const m = await scrape(twoLoops());
      assert.deepEqual(samples(m, 'homeostat_node_info'), [
        { value: '1', labels: { node: 'node-a', version: '9.9.9' } },
      ]);
      const labelled = m.flatMap((f) => f.metrics).filter((s) => s.labels?.node !== undefined);
      assert.equal(labelled.length, 1, 'no other series carries a node label');
    });
  });

  it('when a loop is removed, then every series of it is gone and the other loop’s stay', async () => {
    const metrics = twoLoops();
    metrics.removeLoop('cellar');
    const text = await metrics.render();
    assert.doesNotMatch(text, /loop="cellar"/);
    const m = parsePrometheus(text);
    assert.equal(value(m, 'homeostat_loop_measured', { loop: 'greenhouse' }), 20.5);
    assert.equal(value(m, 'homeostat_commands_total', { source: 'mqtt', loop: 'greenhouse' }), 2);
    assert.equal(histogram(text, 'homeostat_cycle_duration_seconds', 'greenhouse')?.count, '2');
  });

  it('when the measured value goes missing, then its series is removed, never exported as NaN', async () => {
    const metrics = twoLoops();
    metrics.loopStatus(status('greenhouse', { measured: undefined }));
    const text = await metrics.render();
    assert.doesNotMatch(text, /NaN/);
    const m = parsePrometheus(text);
    assert.equal(samples(m, 'homeostat_loop_measured', { loop: 'greenhouse' }).length, 0);
    assert.equal(value(m, 'homeostat_loop_setpoint', { loop: 'greenhouse' }), 21);
    assert.equal(value(m, 'homeostat_loop_measured', { loop: 'cellar' }), 75);
  });

  it('when a non-finite number arrives, then no series shows it', async () => {
    const metrics = nodeMetrics();
    metrics.loopStatus(status('greenhouse', { measured: Number.NaN, output: Number.POSITIVE_INFINITY }));
    metrics.cycleDuration('greenhouse', Number.NaN);
    const text = await metrics.render();
    assert.doesNotMatch(text, /NaN|Inf[^o]/);
    assert.equal(value(parsePrometheus(text), 'homeostat_loop_setpoint', { loop: 'greenhouse' }), 21);
  });

  it('when a condition leaves the status, then its series leaves too', async () => {
    const metrics = nodeMetrics();
    metrics.loopStatus(status('greenhouse', { conditions: [condition('Interlocked', 'True')] }));
    metrics.loopStatus(status('greenhouse', { conditions: [condition('Faulted', 'False')] }));
    const m = await scrape(metrics);
    assert.deepEqual(
      samples(m, 'homeostat_loop_condition').map((s) => s.labels?.type),
      ['Faulted'],
    );
  });

  it('when the loop’s unit changes (reload), then the old unit’s series go', async () => {
    let unit = '°C';
    const metrics = new NodeMetrics({ nodeId: 'n', collectProcess: false, unitOf: () => unit });
    metrics.loopStatus(status('greenhouse'));
    unit = '°F';
    metrics.loopStatus(status('greenhouse', { measured: 69, setpoint: 70 }));
    const m = await scrape(metrics);
    assert.deepEqual(
      samples(m, 'homeostat_loop_measured').map((s) => [s.labels?.unit, s.value]),
      [['°F', '69']],
    );
    assert.equal(samples(m, 'homeostat_loop_setpoint').length, 1);
  });

  it('when a command names a loop with no status, then it counts under one "(unknown)" loop', async () => {
    const metrics = twoLoops();
    metrics.command('mqtt', 'typo-1', false, 'unknown loop');
    metrics.command('mqtt', 'typo-2', false, 'unknown loop');
    const m = await scrape(metrics);
    const loops = samples(m, 'homeostat_commands_total').map((s) => s.labels?.loop);
    assert.ok(!loops.includes('typo-1') && !loops.includes('typo-2'));
    const unknown = { source: 'mqtt', loop: UNKNOWN_LOOP_LABEL, result: 'rejected' };
    assert.equal(value(m, 'homeostat_commands_total', unknown), 2);
  });

  describe('collectors', () => {
    it('when none is set, then MQTT and storage series are absent', async () => {
      const m = await scrape(nodeMetrics());
      for (const name of [
        'homeostat_mqtt_connected',
        'homeostat_storage_failed_operations_total',
        'homeostat_storage_healthy',
      ]) {
        assert.equal(samples(m, name).length, 0, name);
      }
    });

    it('reads them at scrape time, not when they are set', async () => {
      const metrics = nodeMetrics();
      let connected: boolean | undefined = true;
      let failed = 0;
      let healthy = true;
      metrics.setCollectors({ mqttConnected: () => connected, storageFailedOperations: () => failed });
      metrics.setCollectors({ storageHealthy: () => healthy });
      const first = await scrape(metrics);
      assert.equal(value(first, 'homeostat_mqtt_connected'), 1);
      assert.equal(value(first, 'homeostat_storage_failed_operations_total'), 0);
      assert.equal(family(first, 'homeostat_storage_failed_operations_total')?.type, 'COUNTER');
      assert.equal(value(first, 'homeostat_storage_healthy'), 1);

      connected = false;
      failed = 4;
      healthy = false;
      const second = await scrape(metrics);
      assert.equal(value(second, 'homeostat_mqtt_connected'), 0);
      assert.equal(value(second, 'homeostat_storage_failed_operations_total'), 4);
      assert.equal(value(second, 'homeostat_storage_healthy'), 0);

      connected = undefined; // MQTT not configured
      assert.equal(samples(await scrape(metrics), 'homeostat_mqtt_connected').length, 0);
    });

    it("the HTTP guards' figures: auth failures, throttled requests, locked-out addresses, evicted and refused connections", async () => {
      const metrics = nodeMetrics();
      const names = [
        'homeostat_http_auth_failures_total',
        'homeostat_http_auth_throttled_total',
        'homeostat_http_locked_out_addresses',
        'homeostat_http_connections_evicted_total',
        'homeostat_http_connections_refused_total',
      ];
      const none = await scrape(metrics);
      for (const name of names) assert.equal(samples(none, name).length, 0, `${name} without a server`);
      let lockedOut = 1;
      metrics.setCollectors({
        httpAuthFailures: () => 7,
        httpAuthThrottled: () => 2_993,
        httpLockedOutAddresses: () => lockedOut,
        httpConnectionsEvicted: () => 12,
        httpConnectionsRefused: () => 3,
      });
      const m = await scrape(metrics);
      assert.deepEqual(
        names.map((name) => value(m, name)),
        [7, 2_993, 1, 12, 3],
      );
      assert.equal(family(m, 'homeostat_http_auth_failures_total')?.type, 'COUNTER');
      assert.equal(family(m, 'homeostat_http_locked_out_addresses')?.type, 'GAUGE');
      lockedOut = 0;
      assert.equal(value(await scrape(metrics), 'homeostat_http_locked_out_addresses'), 0);
    });

    it("given alert channels, then each one's sent, failed and dropped totals and its backlog are series by channel", async () => {
      const metrics = nodeMetrics();
      const none = await scrape(metrics);
      assert.equal(samples(none, 'homeostat_alerts_sent_total').length, 0, 'no series without alerts');
      metrics.setCollectors({
        alerts: () => [
          { channel: 'phone', sent: 4, failed: 9, dropped: 0, undelivered: 2 },
          { channel: 'mqtt', sent: 6, failed: 0, dropped: 1, undelivered: 0 },
        ],
      });
      const m = await scrape(metrics);
      assert.deepEqual(
        ['sent_total', 'failed_total', 'dropped_total', 'undelivered'].map((name) => [
          value(m, `homeostat_alerts_${name}`, { channel: 'phone' }),
          value(m, `homeostat_alerts_${name}`, { channel: 'mqtt' }),
        ]),
        [
          [4, 6],
          [9, 0],
          [0, 1],
          [2, 0],
        ],
      );
      assert.equal(family(m, 'homeostat_alerts_failed_total')?.type, 'COUNTER');
      assert.equal(family(m, 'homeostat_alerts_undelivered')?.type, 'GAUGE');
    });

    it('when one throws, then its series is absent, the scrape answers and it is logged once', async () => {
      const log = recordingLogger();
      const metrics = new NodeMetrics({ nodeId: 'n', collectProcess: false, logger: log.logger });
      metrics.setCollectors({
        storageHealthy: () => {
          throw new Error('database gone');
        },
        mqttConnected: () => true,
      });
      await metrics.render();
      const m = await scrape(metrics);
      assert.equal(samples(m, 'homeostat_storage_healthy').length, 0);
      assert.equal(value(m, 'homeostat_mqtt_connected'), 1);
      assert.equal(log.atLevel(LogLevel.warn).length, 1);
    });
  });

  it('when an update is malformed, then it never throws (the regulation path calls it)', () => {
    const metrics = nodeMetrics();
    const broken = { ...status('greenhouse'), conditions: undefined } as unknown as LoopStatus;
    assert.doesNotThrow(() => metrics.loopStatus(broken));
    assert.doesNotThrow(() => metrics.command('mqtt', 'greenhouse', true));
  });

  it('given two instances, then they share no series', async () => {
    const a = nodeMetrics('node-a');
    const b = nodeMetrics('node-b');
    a.loopStatus(status('greenhouse'));
    a.command('mqtt', 'greenhouse', true);
    b.loopStatus(status('cellar', { setpoint: 60 }));
    const [ma, mb] = [await scrape(a), await scrape(b)];
    assert.deepEqual(
      samples(ma, 'homeostat_loop_setpoint').map((s) => s.labels?.loop),
      ['greenhouse'],
    );
    assert.deepEqual(
      samples(mb, 'homeostat_loop_setpoint').map((s) => s.labels?.loop),
      ['cellar'],
    );
    assert.equal(samples(mb, 'homeostat_commands_total').length, 0);
    assert.equal(samples(mb, 'homeostat_node_info')[0]?.labels?.node, 'node-b');
  });

  it('by default, then exports the standard process and Node.js metrics', async () => {
    const metrics = new NodeMetrics({ nodeId: 'n' });
    assert.match(metrics.contentType, /^text\/plain/);
    const names = (await scrape(metrics)).map((f) => f.name);
    for (const name of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
    ]) {
      assert.ok(names.includes(name), name);
    }
    assert.ok(!names.some((name) => name.startsWith('homeostat_process_')));
  });
});
