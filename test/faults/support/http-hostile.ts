/**
 * The hostile-request corpus of http.fault.ts: malformed, oversized, cross-site and otherwise
 * refused requests against the daemon's API, each with the answers the API contract allows.
 */
import { seededRandom } from '../../integration/helpers.js';
import { BAD_JSON, BUILT_IN_IDS } from './hostile.js';
import { type RawRequest, requestText } from './http.js';

/** One hostile request of the corpus. */
export interface HostileRequest {
  label: string;
  req: RawRequest;
  /** Would change stored state if accepted (a write with a body a loop could take). */
  write: boolean;
  /** A well-formed request: it must be answered (a malformed one may just be closed). */
  wellFormed: boolean;
  /** The statuses the contract gives it, when it names them. */
  expect?: number[];
  /** What its answer must not contain (a file from outside the dashboard's folder). */
  mustNotContain?: RegExp;
}

/** A setpoint each demo loop accepts (the bait of the header attacks: only the headers are wrong). */
export const VALID_SETPOINT: Record<string, number> = { room: 22.5, fermenter: 21, greenhouse_humidity: 70 };
/** Each demo loop's limits: a number inside is a valid setpoint, left out of the hostile bodies. */
const LIMITS: Record<string, [number, number]> = {
  room: [5, 30],
  fermenter: [0, 30],
  greenhouse_humidity: [30, 90],
};
/** The same built-in names the MQTT corpus sends as loop ids. */
export const BUILT_IN_LOOP_IDS: readonly string[] = BUILT_IN_IDS;
const GET_PATHS = [
  '/',
  '/fleet',
  '/assets/app.js',
  '/api/node',
  '/api/health',
  '/api/loops',
  '/api/loops/room',
  '/api/loops/room/history',
  '/api/fleet',
  '/api/events',
  '/api/stream',
  '/metrics',
  '/api/openapi.json',
];
const WRITE_PATHS = (loop: string) => [`/api/loops/${loop}`, `/api/loops/${loop}/fault-reset`];
/** JSON bodies for POST /api/loops/{loop}: duplicate keys, non-finite numbers, pollution, junk. */
const BAD_BODIES = [
  // The MQTT corpus's JSON commands, then what only an HTTP body can carry.
  ...BAD_JSON,
  '{"mode":"HEAT"}',
  '{"mode":"heat\\u0000"}',
  '',
  ' ',
  '\ufeff{"setpoint":1e999}',
  '{"setpoint":2\u00000}',
  '{"setpoint":20}'.replace('{', '{\u202e'),
];
/** Number literals in `{"setpoint": X}`: each loop leaves out those inside its limits. */
const NUMBER_LITERALS = [
  'NaN',
  '-NaN',
  'Infinity',
  '-Infinity',
  '1e999',
  '-1e999',
  '1e308',
  '-1e308',
  '-0',
  '-0.0',
  '0',
  '1e-400',
  '4.9e-324',
  '123456789012345678901234567890',
  '-123456789012345678901234567890',
  `1${'0'.repeat(400)}`,
  '9007199254740993',
  '1.7976931348623157e308',
  '0x14',
  '+20',
  '.5',
  '20.',
  '2e1',
  '20e0',
  '31',
  '-1000',
];
const BAD_RESETS = [
  'RESET',
  'reset\u0000',
  'reset reset',
  '{"reset":true}',
  '[]',
  'null',
  '1',
  'x'.repeat(500),
];
const UNKNOWN_LOOPS = [
  ...BUILT_IN_LOOP_IDS,
  '%5F%5Fproto%5F%5F',
  'ROOM',
  'room%00',
  'room%20',
  '%20room',
  'room%2Fhistory',
  '..%2Froom',
  '%2e%2e',
  '%F0%9F%94%A5',
  'r'.repeat(300),
];
const GARBAGE_PATHS = [
  '/api/loops/%',
  '/api/loops/%%',
  '/api/loops/%zz',
  '/api/loops/%E0%A4%A',
  '/api/loops/%C0%AF',
  '/api/loops/%FF%FE',
  '/api/loops/room%',
  '/api/loops/%u0072oom',
  '/api/%2e%2e/loops',
  '/%2e%2e/%2e%2e/etc/passwd',
  '/assets/..%2f..%2fpackage.json',
  '/assets/%2e%2e%2fsrc%2fcli.ts',
  '/assets/..%5c..%5cpackage.json',
  '/assets/%00app.js',
  '/assets/app.js%00.png',
  '/assets/.env',
  '/assets/%2e%2e',
  '//api//loops//room',
  '/api/loops/room/history/..',
  '/API/LOOPS',
  '/api/loops/room;x=1',
  '/api/loops/room/history?since=%',
  '/api/loops/room/history?since=%FF',
  '/api/loops/room/history?since=1e999d',
  '/api/loops/room/history?since=-7d',
  '/api/loops/room/history?since=99999999999999999999d',
  '/api/loops/room/history?since=NaN',
  '/api/loops/room/history?since=0000-01-01',
  '/api/loops/room/history?since=2026-13-45T99:99:99Z',
  '/api/loops/room/history?since=401d',
  '/api/loops/room/history?since=7d&until=8d',
  '/api/loops/room/history?until=+275760-09-13T00:00:00Z',
  '/api/loops/room/history?maxPoints=0',
  '/api/loops/room/history?maxPoints=-1',
  '/api/loops/room/history?maxPoints=1e9',
  '/api/loops/room/history?maxPoints=5001',
  '/api/loops/room/history?maxPoints=%00',
  '/api/events?limit=%00',
  '/api/events?limit=100000',
  '/api/events?loop=%E0%A4%A',
  `/api/events?kind=${'k'.repeat(100)}`,
  '/api/events?since=99999999999999999999d',
];
/**
 * What a file from outside the dashboard's folder would show (package.json, /etc/passwd, a
 * TypeScript source): dot segments (`%2e%2e` too) are resolved by the URL parser, so
 * `/assets/%2e%2e` is `/` (the dashboard), which is fine; anything else is not.
 */
const LEAKED = /"devDependencies"|root:x?:0:|from '\.\.?\//;

/**
 * At least `atLeast` hostile requests against the API on `port`, for the demo's `loops`: the
 * same on every run (seeded). None may be accepted, none may hang, none may cost a 5xx.
 */
export function hostileHttpCorpus(port: number, loops: readonly string[], atLeast = 2_000): HostileRequest[] {
  const corpus: HostileRequest[] = [];
  const text: Text = (method, path, opts = {}) => requestText(method, path, { port, ...opts });
  const add: Add = (label, chunks, more = {}) => {
    const { head, thenWait, ...rest } = more;
    corpus.push({
      label,
      req: { chunks, ...(head ? { head } : {}), ...(thenWait ? { thenWait, timeoutMs: 16_000 } : {}) },
      write: false,
      wellFormed: true,
      ...rest,
    });
  };
  addRouteAttacks(add, text);
  addHeaderAttacks(add, text, port, loops);
  for (const loop of loops) addRefusedBodies(add, text, loop);
  addUnknownLoops(add, text);
  // Percent-encoding garbage and odd queries, read and written
  for (const path of GARBAGE_PATHS) {
    add(`GET ${path.slice(0, 60)}`, [text('GET', path)], { mustNotContain: LEAKED });
    // A refused body: a path that resolves to a loop's route (dot segments) may reach the parser
    add(`POST ${path.slice(0, 60)}`, [text('POST', path, { body: '{"setpoint":1e999}' })], { write: true });
  }
  addMalformed(add, text, port);
  addOversized(add, text, loops);
  addRandom(add, text, loops, () => corpus.length < atLeast);
  return corpus;
}

const valid = (loop: string) => JSON.stringify({ setpoint: VALID_SETPOINT[loop] ?? 20 });
/** A command the parser refuses (or the rate limit holds back). */
const REFUSAL = [422, 429];

/** HEAD on every route, and methods no route has (a valid body where a loop's route is). */
function addRouteAttacks(add: Add, text: Text): void {
  for (const path of [...GET_PATHS, ...WRITE_PATHS('room'), '/api/session']) {
    add(`HEAD ${path}`, [text('HEAD', path)], { head: true });
    for (const method of ['PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND']) {
      if (method === 'DELETE' && path === '/api/session') continue; // a route (logs out)
      const body = path.startsWith('/api/loops/room') ? valid('room') : undefined;
      add(`${method} ${path}`, [text(method, path, body === undefined ? {} : { body })], {
        write: body !== undefined,
        expect: [404, 405],
      });
    }
    for (const method of ['FOO', 'get', 'G E T']) {
      add(`${method} ${path}`, [text(method, path)], { wellFormed: false });
    }
  }
}

/** A write a loop would take, with the headers a browser on another site (or a rebinding page) sends. */
function addHeaderAttacks(add: Add, text: Text, port: number, loops: readonly string[]): void {
  const headerAttacks: Array<[string, Record<string, string>, number[], string | null | undefined]> = [
    ['text/plain', { 'Content-Type': 'text/plain' }, [415], undefined],
    ['form post', { 'Content-Type': 'application/x-www-form-urlencoded' }, [415], undefined],
    ['multipart', { 'Content-Type': 'multipart/form-data; boundary=x' }, [415], undefined],
    ['no Content-Type', { 'Content-Type': '' }, [415], undefined],
    ['JSON, text list', { 'Content-Type': 'application/json, text/plain' }, [415], undefined],
    ['text/json', { 'Content-Type': 'text/json' }, [415], undefined],
    ['Origin evil', { Origin: 'http://evil.example' }, [403], undefined],
    ['Origin null', { Origin: 'null' }, [403], undefined],
    ['Origin other port', { Origin: 'http://127.0.0.1:1' }, [403], undefined],
    ['Origin localhost', { Origin: `http://localhost:${port}` }, [403], undefined],
    ['Origin garbage', { Origin: '::::' }, [403], undefined],
    ['Sec-Fetch-Site cross-site', { 'Sec-Fetch-Site': 'cross-site' }, [403], undefined],
    ['Sec-Fetch-Site same-site', { 'Sec-Fetch-Site': 'same-site' }, [403], undefined],
    ['Host evil', {}, [403], 'evil.example'],
    ['Host evil:port', {}, [403], `evil.example:${port}`],
    ['Host localhost.evil', {}, [403], 'localhost.evil.example'],
    ['Host 127.0.0.1.nip.io', {}, [403], `127.0.0.1.nip.io:${port}`],
    ['Host localhost.', {}, [403], `localhost.:${port}`],
    ['rebinding page', { Origin: `http://evil.example:${port}` }, [403], `evil.example:${port}`],
    ['no Host', {}, [400], null],
  ];
  for (const loop of loops) {
    for (const path of WRITE_PATHS(loop)) {
      const body = path.endsWith('fault-reset') ? '{}' : valid(loop);
      for (const [label, headers, expect, host] of headerAttacks) {
        add(
          `${label}: POST ${path}`,
          [text('POST', path, { body, headers, ...(host === undefined ? {} : { host }) })],
          {
            write: true,
            expect,
            // Node answers a missing Host (HTTP/1.1) itself, or closes
            ...(host === null ? { wellFormed: false } : {}),
          },
        );
      }
    }
  }
}

/** Bodies the command parser must refuse, to a loop's two write routes. */
function addRefusedBodies(add: Add, text: Text, loop: string): void {
  const [min, max] = LIMITS[loop] ?? [0, 0];
  const bodies = [...BAD_BODIES];
  for (const literal of NUMBER_LITERALS) {
    const value = Number(literal);
    if (Number.isFinite(value) && value >= min && value <= max && /^-?[\d.]/.test(literal)) continue;
    bodies.push(`{"setpoint":${literal}}`);
  }
  for (const depth of [10, 100, 500, 1000]) {
    bodies.push('['.repeat(depth) + ']'.repeat(depth), `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);
  }
  for (const body of bodies) {
    add(
      `POST /api/loops/${loop} ${JSON.stringify(body.slice(0, 40))}`,
      [text('POST', `/api/loops/${loop}`, { body })],
      {
        write: true,
        expect: Buffer.byteLength(body) > 4096 ? [413] : REFUSAL,
      },
    );
  }
  for (const body of BAD_RESETS) {
    add(
      `fault-reset ${loop} ${JSON.stringify(body.slice(0, 30))}`,
      [text('POST', `/api/loops/${loop}/fault-reset`, { body })],
      {
        write: true,
        expect: REFUSAL,
      },
    );
  }
  for (const bytes of [
    [0x80],
    [0xc0, 0xaf],
    [0xed, 0xa0, 0x80],
    [0xff],
    [0x7b, 0x22, 0x73, 0xff, 0x22, 0x7d],
  ]) {
    for (const path of WRITE_PATHS(loop)) {
      const body = Buffer.from(bytes);
      const head = text('POST', path, {
        headers: { 'Content-Type': 'application/json', 'Content-Length': String(body.length) },
      });
      add(`invalid UTF-8 ${body.toString('hex')} to ${path}`, [head, body], {
        write: true,
        expect: REFUSAL,
      });
    }
  }
}

/** Unknown loops (built-in names, encodings, case): read, written, reset. */
function addUnknownLoops(add: Add, text: Text): void {
  for (const loop of UNKNOWN_LOOPS) {
    add(`GET unknown ${loop.slice(0, 30)}`, [text('GET', `/api/loops/${loop}`)], { expect: [404] });
    add(`HEAD unknown ${loop.slice(0, 30)}`, [text('HEAD', `/api/loops/${loop}`)], {
      head: true,
      expect: [404],
    });
    add(`history of unknown ${loop.slice(0, 30)}`, [text('GET', `/api/loops/${loop}/history`)], {
      expect: [404],
    });
    add(
      `POST unknown ${loop.slice(0, 30)}`,
      [text('POST', `/api/loops/${loop}`, { body: '{"setpoint":20}' })],
      { write: true, expect: [404] },
    );
    add(
      `fault-reset unknown ${loop.slice(0, 30)}`,
      [text('POST', `/api/loops/${loop}/fault-reset`, { body: '{}' })],
      { write: true, expect: [404] },
    );
  }
}

/** Seeded random bodies (never valid JSON) and paths, while `more()`. */
function addRandom(add: Add, text: Text, loops: readonly string[], more: () => boolean): void {
  const random = seededRandom(0x4ee7_b0d1);
  for (let i = 0; more(); i++) {
    const loop = loops[i % loops.length]!;
    const size = 1 + Math.floor(random() * 300);
    const bytes = Buffer.alloc(size);
    for (let b = 0; b < size; b++)
      bytes[b] = i % 2 === 0 ? Math.floor(random() * 256) : 32 + Math.floor(random() * 95);
    let parses = true;
    try {
      JSON.parse(bytes.toString('utf8'));
    } catch {
      parses = false;
    }
    if (parses) continue;
    if (i % 3 === 2) {
      const path = `/api/loops/${[...bytes.subarray(0, 40)].map((b) => (b > 32 && b < 127 && b !== 37 && b !== 63 && b !== 35 ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, '0')}`)).join('')}`;
      add(`random path ${i}`, [text('GET', path)], { expect: [400, 404, 405] });
      continue;
    }
    const path = i % 5 === 0 ? `/api/loops/${loop}/fault-reset` : `/api/loops/${loop}`;
    const head = text('POST', path, {
      headers: { 'Content-Type': 'application/json', 'Content-Length': String(size) },
    });
    add(`random ${size} B body to ${path}`, [head, bytes], { write: true, expect: REFUSAL });
  }
}

type Add = (
  label: string,
  chunks: Array<string | Buffer>,
  more?: Partial<HostileRequest> & { head?: boolean; thenWait?: boolean },
) => void;
type Text = (
  method: string,
  path: string,
  opts?: { headers?: Record<string, string>; body?: string; host?: string | null },
) => string;

/** Requests no HTTP library would send: the server may answer 4xx or just close. */
function addMalformed(add: Add, text: Text, port: number): void {
  const host = `Host: 127.0.0.1:${port}\r\nConnection: close\r\n`;
  const long = 'a'.repeat(100 * 1024);
  const malformed: Array<[string, string | Buffer]> = [
    ['100 KB URL', text('GET', `/api/loops/room?x=${long}`)],
    ['100 KB path', text('GET', `/api/loops/${long}`)],
    ['100 KB URL, write', text('POST', `/api/loops/room?x=${long}`, { body: '{"setpoint":22.5}' })],
    ['100 KB history query', text('GET', `/api/loops/room/history?since=${long}`)],
    ['20 KB header', text('GET', '/api/loops/room', { headers: { 'X-Big': 'b'.repeat(20 * 1024) } })],
    ['200 headers of 1 KB', text('GET', '/api/loops/room', { headers: manyHeaders(200, 1024) })],
    [
      'CL and TE',
      `POST /api/loops/room HTTP/1.1\r\n${host}Content-Type: application/json\r\nContent-Length: 17\r\nTransfer-Encoding: chunked\r\n\r\n11\r\n{"setpoint":22.5}\r\n0\r\n\r\n`,
    ],
    [
      'two Content-Lengths',
      `POST /api/loops/room HTTP/1.1\r\n${host}Content-Type: application/json\r\nContent-Length: 17\r\nContent-Length: 3\r\n\r\n{"setpoint":22.5}`,
    ],
    [
      'Content-Length -1',
      `POST /api/loops/room HTTP/1.1\r\n${host}Content-Type: application/json\r\nContent-Length: -1\r\n\r\n{}`,
    ],
    [
      'Content-Length abc',
      `POST /api/loops/room HTTP/1.1\r\n${host}Content-Type: application/json\r\nContent-Length: abc\r\n\r\n{}`,
    ],
    [
      'bad chunk size',
      `POST /api/loops/room HTTP/1.1\r\n${host}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{"setpoint":22.5}\r\n0\r\n\r\n`,
    ],
    [
      'chunked smuggling',
      `POST /api/loops/room HTTP/1.1\r\n${host}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nPOST /api/loops/room HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\nContent-Length: 17\r\n\r\n{"setpoint":22.5}`,
    ],
    // Node takes `identity, chunked` as chunked (a valid body would be a valid write): refused body
    [
      'TE identity, chunked',
      `POST /api/loops/room HTTP/1.1\r\n${host}Content-Type: application/json\r\nTransfer-Encoding: identity, chunked\r\n\r\n12\r\n{"setpoint":1e999}\r\n0\r\n\r\n`,
    ],
    ['garbage line', 'GARBAGE\r\n\r\n'],
    ['TLS hello', Buffer.from('160301020001000100030358a1b2c3', 'hex')],
    ['HTTP/2 preface', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'],
    ['HTTP/9.9', `GET /api/loops HTTP/9.9\r\n${host}\r\n`],
    ['HTTP/0.9', 'GET /api/loops\r\n'],
    ['bare LF', `GET /api/loops HTTP/1.1\nHost: 127.0.0.1:${port}\nConnection: close\n\n`],
    ['NUL in path', `GET /api/loops/room\u0000x HTTP/1.1\r\n${host}\r\n`],
    ['space in path', `GET /api/loops/ro om HTTP/1.1\r\n${host}\r\n`],
    ['absolute-form evil', `GET http://evil.example/api/loops HTTP/1.1\r\n${host}\r\n`],
    ['asterisk-form', `OPTIONS * HTTP/1.1\r\n${host}\r\n`],
    ['CONNECT', `CONNECT 127.0.0.1:22 HTTP/1.1\r\n${host}\r\n`],
    ['1,000-byte method', `${'A'.repeat(1000)} / HTTP/1.1\r\n${host}\r\n`],
    ['header without colon', `GET /api/loops HTTP/1.1\r\n${host}NoColonHere\r\n\r\n`],
    ['header folding', `GET /api/loops HTTP/1.1\r\n${host}X-A: 1\r\n  folded\r\n\r\n`],
    ['CR in header', `GET /api/loops HTTP/1.1\r\n${host}X-A: 1\rX-B: 2\r\n\r\n`],
    [
      'Expect 100-continue, no body',
      `POST /api/loops/room HTTP/1.1\r\n${host}Content-Type: application/json\r\nContent-Length: 17\r\nExpect: 100-continue\r\n\r\n`,
    ],
    [
      'Upgrade websocket',
      `GET /api/stream HTTP/1.1\r\n${host}Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    ],
  ];
  // A write whenever it carries a setpoint: a framing trick that got one through would show
  for (const [label, chunk] of malformed)
    add(label, [chunk], { wellFormed: false, write: String(chunk).includes('"setpoint"') });
  // 200 small headers: answered (beyond 50 they are ignored); Origin first is still seen
  add('200 headers', [text('GET', '/api/loops/room', { headers: manyHeaders(200, 8) })], { expect: [200] });
  add(
    '200 headers, Origin evil first',
    [
      text('POST', '/api/loops/room', {
        body: '{"setpoint":22.5}',
        headers: { Origin: 'http://evil.example', ...manyHeaders(200, 8) },
      }),
    ],
    { write: true, expect: [403] },
  );
  // Bodies that never finish: the request timeout (10 s) must close them
  for (const path of [
    '/api/loops/room',
    '/api/loops/room/fault-reset',
    '/api/session',
    '/api/loops/__proto__',
  ]) {
    add(
      `never-ending body to ${path}`,
      [
        `POST ${path} HTTP/1.1\r\n${host}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"setpoint":`,
      ],
      { wellFormed: false, write: true, thenWait: true },
    );
    add(
      `never-ending chunked body to ${path}`,
      [
        `POST ${path} HTTP/1.1\r\n${host}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"set\r\n`,
      ],
      { wellFormed: false, write: true, thenWait: true },
    );
    add(
      `headers never end on ${path}`,
      [`POST ${path} HTTP/1.1\r\n${host}Content-Type: application/json\r\nX-Slow: `],
      { wellFormed: false, write: true, thenWait: true },
    );
  }
}

/** 1 MB bodies, declared and undeclared, and lies about the length. */
function addOversized(add: Add, text: Text, loops: readonly string[]): void {
  const megabyte = `{"setpoint":22.5,"requestId":"${'x'.repeat(1_048_576 - 40)}"}`;
  const chunked = (path: string) => {
    const head = text('POST', path, {
      headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
    });
    const chunks: Array<string | Buffer> = [head];
    for (let at = 0; at < megabyte.length; at += 65_536) {
      const part = megabyte.slice(at, at + 65_536);
      chunks.push(`${part.length.toString(16)}\r\n${part}\r\n`);
    }
    chunks.push('0\r\n\r\n');
    return chunks;
  };
  for (const path of [...loops.flatMap(WRITE_PATHS), '/api/session', '/api/loops/__proto__']) {
    const more = { write: true, wellFormed: false, expect: [413] };
    add(`1 MB declared to ${path}`, [text('POST', path, { body: megabyte })], more);
    add(`1 MB chunked to ${path}`, chunked(path), more);
    add(
      `1 TB declared, 17 B sent, to ${path}`,
      [
        text('POST', path, {
          headers: { 'Content-Type': 'application/json', 'Content-Length': String(1e12) },
        }),
        '{"setpoint":22.5}',
      ],
      more,
    );
    add(
      `4,097 B declared to ${path}`,
      [text('POST', path, { body: `{"x":"${'y'.repeat(4097 - 8)}"}` })],
      more,
    );
  }
}

function manyHeaders(count: number, valueBytes: number): Record<string, string> {
  const headers: Record<string, string> = {};
  for (let i = 0; i < count; i++) headers[`X-H-${i}`] = 'v'.repeat(valueBytes);
  return headers;
}
