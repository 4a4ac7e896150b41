/**
 * A Brewfather custom stream's post as Brewfather documents it
 * (https://docs.brewfather.app/integrations/custom-stream): `name` required; `temp` with
 * `temp_unit` C or F; `gravity` with `gravity_unit` G or P; `aux_temp` (Fridge Temp),
 * `ext_temp` (Room Temp), `pressure` with `pressure_unit`, `ph`, `bpm`, `battery`, `beer`,
 * `comment`. And the URL it goes to, from the stream id file.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { type BrewfatherSample, brewfatherBody, brewfatherUrl } from '../../src/alerts/brewfather.js';
import { brewfatherSchema } from '../../src/config/schema/brewfather.js';
import { configErrors, minimalSimConfigText, validConfig } from '../support/config.js';
import { type HasAfter, tempDir } from '../support/tmp.js';

const config = (extra: Record<string, unknown> = {}) =>
  brewfatherSchema.parse({ streamIdFile: '/etc/homeostat/brewfather.id', ...extra });

const SAMPLE: BrewfatherSample = {
  loop: 'fermenter',
  unit: '°C',
  setpoint: 19,
  action: 'heating',
  measured: 18.8234,
  recorded: (sensor) => ({ spindel_gravity: 1.01249, spindel_battery: 3.91, fridge: Number.NaN })[sensor],
};

describe('brewfatherBody', () => {
  const cases: Array<{
    given: string;
    config: Record<string, unknown>;
    sample?: Partial<BrewfatherSample>;
    body: object;
  }> = [
    {
      given: 'only the loop',
      config: {},
      body: { name: 'fermenter', temp: 18.823, temp_unit: 'C', comment: 'setpoint 19 °C, heating' },
    },
    {
      given: 'a name, a beer, gravity in Plato and the battery',
      config: {
        name: 'FV1',
        beer: 'Pale Ale',
        gravity: 'spindel_gravity',
        battery: 'spindel_battery',
        gravityUnit: 'P',
      },
      body: {
        name: 'FV1',
        temp: 18.823,
        temp_unit: 'C',
        gravity: 1.012,
        gravity_unit: 'P',
        battery: 3.91,
        beer: 'Pale Ale',
        comment: 'setpoint 19 °C, heating',
      },
    },
    {
      given: 'a recorded value that is not a number now (left out, never NaN)',
      config: { aux_temp: 'fridge' },
      body: { name: 'fermenter', temp: 18.823, temp_unit: 'C', comment: 'setpoint 19 °C, heating' },
    },
    {
      given: 'a loop in °F',
      config: {},
      sample: { unit: '°F', setpoint: 66, measured: 65.5 },
      body: { name: 'fermenter', temp: 65.5, temp_unit: 'F', comment: 'setpoint 66 °F, heating' },
    },
    {
      given: 'no reading (a sensor fault): no temp, the reason in the comment',
      config: {},
      sample: { measured: undefined, fault: 'actuators safe: reading stale for 26 s' },
      body: {
        name: 'fermenter',
        temp_unit: 'C',
        comment: 'no reading: actuators safe: reading stale for 26 s',
      },
    },
  ];
  for (const { given, config: extra, sample, body } of cases) {
    test(`given ${given}`, () => {
      assert.deepEqual(brewfatherBody(config(extra), { ...SAMPLE, ...sample }), body);
    });
  }
});

describe('brewfatherUrl: from the stream id file', () => {
  const idFile = (t: HasAfter, content: string) => {
    const file = path.join(tempDir(t), 'brewfather.id');
    writeFileSync(file, content);
    return file;
  };

  test('a logging id: appended to apiUrl', (t) => {
    assert.equal(
      brewfatherUrl('fermenter', config({ streamIdFile: idFile(t, 'Ab12Cd34\n') })),
      'https://log.brewfather.net/stream?id=Ab12Cd34',
    );
  });

  test('the whole URL Brewfather shows: used as it is', (t) => {
    const url = 'http://log.brewfather.net/stream?id=Ab12Cd34';
    assert.equal(brewfatherUrl('fermenter', config({ streamIdFile: idFile(t, `${url}\n`) })), url);
  });

  const refusals: Array<[given: string, content: string | undefined, message: RegExp]> = [
    ['a URL without ?id=', 'https://log.brewfather.net/stream', /holds a URL without \?id=/],
    ['text that is no id', 'my id is secret', /holds no logging id/],
    ['no file', undefined, /^loops\.fermenter\.brewfather\.streamIdFile: cannot read .*ENOENT/],
  ];
  for (const [given, content, message] of refusals) {
    test(`given ${given}: a message naming the file, never its content`, (t) => {
      const file = content === undefined ? path.join(tempDir(t), 'none') : idFile(t, content);
      assert.throws(
        () => brewfatherUrl('fermenter', config({ streamIdFile: file })),
        (error: Error) => message.test(error.message) && !error.message.includes('secret'),
      );
    });
  }
});

describe('a loop’s brewfather block in the config', () => {
  // A second simulated sensor the loop may record (a hydrometer's gravity, say).
  const withStream = (stream: string, loopMore = '') =>
    minimalSimConfigText({ loopExtra: `${loopMore}    brewfather: ${stream}` }).replace(
      'sensors:\n',
      `sensors:\n  spindel: { kind: simulated, plant: p }\n`,
    );
  const cases: Array<[given: string, text: string, error: RegExp | undefined]> = [
    ['an id file only', withStream('{ streamIdFile: /etc/homeostat/brewfather.id }'), undefined],
    [
      'gravity from a recorded sensor',
      withStream('{ streamIdFile: /f, gravity: spindel }', '    record: [spindel]\n'),
      undefined,
    ],
    [
      'gravity from a sensor the loop does not record',
      withStream('{ streamIdFile: /f, gravity: spindel }'),
      /loops\.room\.brewfather\.gravity: "spindel" is not recorded by this loop: add it to loops\.room\.record/,
    ],
    ['posts every 5 min', withStream('{ streamIdFile: /f, everyS: 300 }'), /everyS: at least 900/],
    ['no id file', withStream('{ name: FV1 }'), /streamIdFile/],
    [
      'a humidity loop',
      withStream('{ streamIdFile: /f }', '    quantity: humidity\n').replace(
        'limits: { min: 5, max: 30 }',
        'limits: { min: 30, max: 80 }',
      ),
      /a Brewfather stream posts a temperature; this loop regulates humidity/,
    ],
  ];
  for (const [given, text, error] of cases) {
    test(`given ${given}: ${error ?? 'valid'}`, () => {
      if (error === undefined) validConfig(text);
      else assert.match(configErrors(text).join('\n'), error);
    });
  }
});
