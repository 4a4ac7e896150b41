/**
 * The safety monitors' two tables agree: every pure monitor (core/monitors/index.ts) has its
 * config part (kinds/monitors/registry.ts) under the same name, each loop monitor's block is a
 * key of the loop's schema and is documented in the generated reference's Loop safety section,
 * and each monitor's memory slot is moved on a clock step and kept or dropped by idle/resume.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { CONFIG_REFERENCE_PATH } from '../../src/config/reference.js';
import { loopSchema } from '../../src/config/schema/loop.js';
import { SHIFTED_MEMORY_TIMES } from '../../src/core/clock-step.js';
import { SAFETY_MONITORS } from '../../src/core/monitors/index.js';
import type { AnySafetyMonitor } from '../../src/core/monitors/types.js';
import { relayFields } from '../../src/kinds/fields.js';
import { ACTUATOR_MONITORS, LOOP_MONITORS, MONITOR_CONFIGS } from '../../src/kinds/monitors/registry.js';

const table: readonly AnySafetyMonitor[] = SAFETY_MONITORS;

describe('safety monitor tables', () => {
  test('every pure monitor has its config part, and no config part is without one', () => {
    assert.deepEqual(Object.keys(MONITOR_CONFIGS).sort(), table.map((monitor) => monitor.name).sort());
    assert.equal(LOOP_MONITORS.length + ACTUATOR_MONITORS.length, table.length);
  });

  test("each loop monitor's block is a key of the loop's schema, in the reference's Loop safety section", () => {
    const reference = readFileSync(CONFIG_REFERENCE_PATH, 'utf8');
    const safety = reference.slice(reference.indexOf('\n## Loop safety'));
    for (const monitor of LOOP_MONITORS) {
      assert.ok(Object.hasOwn(loopSchema.shape, monitor.key), monitor.key);
      assert.match(safety, new RegExp(`\`loops\\.<id>\\.${monitor.key}\``), monitor.key);
    }
  });

  test("each actuator monitor's field is a relay field", () => {
    for (const monitor of ACTUATOR_MONITORS) assert.ok(Object.hasOwn(relayFields, monitor.key), monitor.key);
  });

  test("each monitor's memory slot has its times in SHIFTED_MEMORY_TIMES", () => {
    for (const { memory } of table) {
      if (!memory) continue;
      for (const path of memory.shiftedTimes) {
        assert.ok((SHIFTED_MEMORY_TIMES as readonly string[]).includes(`safety.${memory.key}.${path}`));
      }
    }
  });

  test('the fault reasons of the monitors are distinct', () => {
    const reasons = table.flatMap((monitor) => monitor.reasons);
    assert.equal(new Set(reasons).size, reasons.length);
  });
});
