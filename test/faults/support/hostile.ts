import { seededRandom } from '../../integration/helpers.js';

/**
 * Hostile command payloads ("Input cannot exhaust the daemon"): every one must be
 * answered with `accepted: false` (or, above the daemon's packet size limit, never reach it),
 * change nothing and cost the daemon nothing lasting. Built from tables, plus seeded random
 * binary, so the corpus is the same on every run.
 */

export type Kind = 'setpoint/set' | 'mode/set' | 'set' | 'fault/reset';

export interface Hostile {
  /** Loop id as the topic level: a real loop or a JavaScript built-in name. */
  loop: string;
  kind: Kind;
  payload: Buffer;
  /** What it is, for failure messages. */
  label: string;
}

/** Loop ids that are names of Object.prototype members: looked up, they must be unknown loops. */
export const BUILT_IN_IDS = [
  '__proto__',
  'constructor',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
  '__defineGetter__',
  '__lookupGetter__',
  'prototype',
] as const;

/** Numbers that must never become a setpoint. */
const BAD_NUMBERS = [
  'NaN',
  '-NaN',
  'Infinity',
  '-Infinity',
  '+Infinity',
  '1e999',
  '-1e999',
  '1e308',
  '-1e308',
  '1e3',
  '2e1',
  '0x14',
  '0b10100',
  '0o24',
  '+20',
  '.5',
  '20.',
  '20,5',
  '20_0',
  '٢٠', // Arabic-Indic digits
  '２０', // full-width digits
  '99999999999999999999999999999999',
  '-99999999999999999999999999999999',
  `1${'0'.repeat(400)}`,
  '4.9e-324',
  '1.7976931348623157e308',
  '9007199254740993',
  '-0.0000000000000000000000001e-999',
  '31', // above every loop's max (30 or 90 for humidity: see below)
  '-1000',
  '1000',
];

/** Payloads that are not a number at all. */
const NOT_NUMBERS = [
  '',
  ' ',
  '\t\n',
  'null',
  'true',
  'false',
  'undefined',
  '"20"',
  "'20'",
  '[20]',
  '{"setpoint":20}',
  '20 21',
  '20\u0000',
  '\u0000',
  '20\r\n21',
  '20°C',
  'twenty',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template placeholder is the payload
  '${20}',
  '{{20}}',
  '<script>20</script>',
  '20; DROP TABLE loop_desired; --',
  '%32%30',
  '\u202e02', // right-to-left override
];

const BAD_MODES = [
  '__proto__',
  'constructor',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'HEAT',
  'Heat',
  'he at',
  'heat\u0000',
  'heat\u0000off',
  'dry',
  'fan_only',
  'auto ',
  'cool;off',
  '{"mode":"heat"}',
  '["heat"]',
  'null',
  'x'.repeat(1000),
  '',
];

/** JSON commands on `<loop>/set`: duplicate keys, non-finite numbers, prototype pollution, junk. */
export const BAD_JSON = [
  '{"setpoint":29,"setpoint":6}',
  '{"setpoint":6,"setpoint":29}',
  '{"mode":"heat","mode":"off"}',
  '{"setpoint":20,"mode":"heat","setpoint":21}',
  '{"requestId":"a","requestId":"b","setpoint":20}',
  '{"setpoint":NaN}',
  '{"setpoint":Infinity}',
  '{"setpoint":-Infinity}',
  '{"setpoint":1e999}',
  '{"setpoint":-1e999}',
  '{"setpoint":1e308}',
  '{"setpoint":123456789012345678901234567890}',
  '{"setpoint":"20"}',
  '{"setpoint":null}',
  '{"setpoint":true}',
  '{"setpoint":[20]}',
  '{"setpoint":{"valueOf":20}}',
  '{"setpoint":{}}',
  '{"setpoint":20,"extra":1}',
  '{"__proto__":{"setpoint":20}}',
  '{"__proto__":{"polluted":true},"setpoint":20}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  '{"mode":"__proto__"}',
  '{"mode":"constructor"}',
  '{"mode":"toString"}',
  '{"mode":"hasOwnProperty"}',
  '{"mode":null}',
  '{"mode":1}',
  '{"requestId":1,"setpoint":20.5}',
  `{"requestId":"${'r'.repeat(200)}","setpoint":20.5}`,
  '{}',
  '[]',
  'null',
  '"setpoint"',
  '20',
  '{"setpoint":20',
  '{setpoint:20}',
  "{'setpoint':20}",
  '{"setpoint":20,}',
  '{"setpoint":0x14}',
  '{"setpoint":+20}',
  '{"setpoint":.5}',
  '{"setpoint":20}\u0000',
  '{"setpoint":20}{"setpoint":21}',
];

const BAD_RESETS = [
  'RESET',
  'Reset',
  'yes',
  'true',
  '1',
  '{}',
  '{"reset":true}',
  'reset\u0000',
  'reset reset',
  'x'.repeat(500),
];

function deepJson(depth: number, open: string, close: string, inner = '1'): string {
  return open.repeat(depth) + inner + close.repeat(depth);
}

/** Invalid UTF-8 sequences (lone continuation bytes, overlong forms, surrogates, 0xFF). */
const INVALID_UTF8 = [
  [0x80],
  [0xbf],
  [0xc0, 0xaf],
  [0xe0, 0x80, 0xaf],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xff],
  [0xfe, 0xff],
  [0x32, 0x30, 0xc3], // "20" and a truncated sequence
  [0x7b, 0x22, 0x73, 0xff, 0x22, 0x7d],
];

/** The whole corpus for the given real loops: at least 1,000 payloads. */
export function hostileCorpus(loops: readonly string[]): Hostile[] {
  const corpus: Hostile[] = [];
  const add = (loop: string, kind: Kind, payload: string | Buffer, label: string) =>
    corpus.push({
      loop,
      kind,
      payload: typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload,
      label,
    });

  for (const loop of loops) {
    for (const text of [...BAD_NUMBERS, ...NOT_NUMBERS]) {
      // Humidity allows up to 90: "31" is a valid humidity setpoint, leave it out there.
      if (loop === 'greenhouse_humidity' && text === '31') continue;
      add(loop, 'setpoint/set', text, `setpoint ${JSON.stringify(text.slice(0, 30))}`);
    }
    for (const text of BAD_MODES) add(loop, 'mode/set', text, `mode ${JSON.stringify(text.slice(0, 30))}`);
    for (const text of BAD_JSON) add(loop, 'set', text, `json ${text.slice(0, 40)}`);
    for (const depth of [10, 100, 200, 300, 400, 500]) {
      add(loop, 'set', deepJson(depth, '[', ']'), `json array nested ${depth} deep`);
      add(loop, 'set', deepJson(depth, '{"a":', '}'), `json object nested ${depth} deep`);
      add(loop, 'set', `{"setpoint":${deepJson(depth, '[', ']', '20')}}`, `setpoint nested ${depth} deep`);
    }
    for (const text of BAD_RESETS)
      add(loop, 'fault/reset', text, `reset ${JSON.stringify(text.slice(0, 30))}`);
    for (const bytes of INVALID_UTF8) {
      for (const kind of ['setpoint/set', 'mode/set', 'set', 'fault/reset'] as const) {
        add(loop, kind, Buffer.from(bytes), `invalid UTF-8 ${Buffer.from(bytes).toString('hex')}`);
      }
    }
    // Just over the command size limit (1 KiB), and well over it
    for (const size of [1025, 2048, 16 * 1024, 100 * 1024]) {
      add(loop, 'setpoint/set', '2'.repeat(size), `oversized ${size} B setpoint`);
      add(loop, 'set', `{"setpoint":20,"requestId":"${'x'.repeat(size)}"}`, `oversized ${size} B json`);
    }
  }
  // Loops that are JavaScript built-ins, with payloads that would be valid for a real loop
  for (const loop of BUILT_IN_IDS) {
    add(loop, 'setpoint/set', '20', 'built-in id, setpoint 20');
    add(loop, 'setpoint/set', '1e999', 'built-in id, setpoint 1e999');
    add(loop, 'mode/set', 'heat', 'built-in id, mode heat');
    add(loop, 'mode/set', 'off', 'built-in id, mode off');
    add(loop, 'set', '{"setpoint":20}', 'built-in id, json setpoint');
    add(loop, 'set', '{"mode":"off","requestId":"b"}', 'built-in id, json mode');
    add(loop, 'fault/reset', '', 'built-in id, fault reset');
    add(loop, 'fault/reset', 'reset', 'built-in id, fault reset "reset"');
  }
  // Seeded random binary until the corpus has 1,000 payloads and then 200 more
  const random = seededRandom(0xbad_c0de);
  const kinds: Kind[] = ['setpoint/set', 'mode/set', 'set', 'fault/reset'];
  for (let i = 0; corpus.length < 1_200; i++) {
    const size = 1 + Math.floor(random() * 600);
    const bytes = Buffer.alloc(size);
    for (let b = 0; b < size; b++) bytes[b] = Math.floor(random() * 256);
    // A random byte string that happens to be a valid command is vanishingly unlikely, but a
    // short one could be (a digit, a space meaning "reset"): keep those out.
    if (/^\s*(-?\d+(\.\d+)?|reset|off|heat)?\s*$/.test(bytes.toString('latin1'))) continue;
    add(loops[i % loops.length]!, kinds[i % kinds.length]!, bytes, `random ${size} B`);
  }
  return corpus;
}
