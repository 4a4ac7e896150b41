/**
 * docs/kernel-sensors.md: every ```yaml snippet is a config `validate` accepts, and every
 * file_value path in them reads a number from a fixture tree shaped like the kernel's (so the
 * documented paths have the layout the drivers really give: bus address, iio:device*, hwmon/hwmon*).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseConfigText } from '../../src/config/load.js';
import { FileValueSensor } from '../../src/drivers/file-value.js';
import { addBme280, addIioDevice, addMax31855, addSht3x } from '../support/kernel-sensors-tree.js';
import { tempDir } from '../support/tmp.js';

const PAGE = fileURLToPath(new URL('../../docs/kernel-sensors.md', import.meta.url));

/** The bodies of the page's ```yaml blocks, in order. */
function yamlBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);
}

const snippets = yamlBlocks(readFileSync(PAGE, 'utf8'));

describe('docs/kernel-sensors.md', () => {
  test('has one snippet per recipe (BME280, SHT3x, SHT4x, DHT22, MAX31855, DS18B20)', () => {
    assert.equal(snippets.length, 6);
  });

  for (const [i, snippet] of snippets.entries()) {
    const firstSensor = /^ {2}(\w+):/m.exec(snippet.slice(snippet.indexOf('sensors:')))?.[1];
    test(`snippet ${i + 1} (${firstSensor}) validates`, () => {
      const result = parseConfigText(snippet, `kernel-sensors.md#${i + 1}`);
      assert.ok(result.ok, result.ok ? '' : result.errors.join('\n'));
    });
  }

  test("every file_value path in the snippets reads a number from a tree shaped like the kernel's", async (t) => {
    const root = tempDir(t);
    addBme280(root, 3);
    addSht3x(root, 1);
    addMax31855(root, 0);
    addIioDevice(root, {
      bus: { platform: 'dht11@0' },
      index: 2,
      name: 'dht11',
      channels: { in_temp_input: '24300', in_humidityrelative_input: '71200' },
    });
    const read: string[] = [];
    for (const snippet of snippets) {
      const result = parseConfigText(snippet);
      assert.ok(result.ok);
      for (const [id, sensor] of Object.entries(result.config.sensors)) {
        if (sensor.kind !== 'file_value') continue;
        const driver = new FileValueSensor({ id, path: sensor.path, scale: sensor.scale, sysfsRoot: root });
        const value = await driver.read();
        assert.ok(Number.isFinite(value), `${id}: ${value}`);
        read.push(`${id} ${value}`);
      }
    }
    assert.deepEqual(read, [
      'air_rh 45.123',
      'air_temp 21.5',
      'room_temp 19.25',
      'cellar_rh 61.5',
      'terrarium_rh 71.2',
      'chamber 100',
    ]);
  });
});
