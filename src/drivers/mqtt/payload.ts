/**
 * What MQTT devices send and expect, as pure functions: numbers out of sensor payloads
 * (plain `21.5`, or a field of a JSON document such as Tasmota's `tele/<x>/SENSOR`), on/off
 * out of state payloads. The switch presets of the device families people run are in
 * switch-presets.ts. No IO here: the drivers call these on every message, tests call them on tables.
 */

/**
 * Payloads longer than this are rejected unread, bytes. A reading or a plug's state is a
 * few hundred bytes; a misrouted topic must not cost a JSON parse per message.
 */
export const MAX_PAYLOAD_BYTES = 16_384;

/**
 * A dot path into a JSON payload: `temperature` (Zigbee2MQTT), `AM2301.Temperature` (Tasmota),
 * `tC` (Shelly); a numeric segment indexes an array (`sensors.0.value`).
 */
export const FIELD_PATH_PATTERN = /^[^.\s]+(\.[^.\s]+)*$/;

/**
 * The outcome of reading a payload. `missing`: the payload has no such field, which for a
 * device that sends several kinds of message on one topic (Tasmota's `stat/<x>/RESULT`)
 * means "not about this": the driver ignores it rather than calling it garbage.
 */
export type Parsed<T> = { ok: true; value: T } | { ok: false; missing: boolean; reason: string };

/** Decimal numbers as people and devices write them; no hex, no `Infinity`, no empty string. */
const DECIMAL = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;

/**
 * A finite number from a payload: the whole payload as a decimal number when `field` is
 * absent, else the field of a JSON object (a number, or a string holding a decimal number).
 * NaN, ±Infinity (`1e999`), booleans, null, objects and oversized payloads are rejected.
 */
export function parseNumberPayload(payload: Buffer, field?: string): Parsed<number> {
  const tooLarge = sizeProblem(payload);
  if (tooLarge) return tooLarge;
  if (field === undefined) {
    const text = payload.toString('utf8').trim();
    const value = toFiniteNumber(text);
    return value === undefined ? rejected(`payload ${preview(text)} is not a finite number`) : ok(value);
  }
  const found = readField(payload, field);
  if (!found.ok) return found;
  const value = toFiniteNumber(found.value);
  return value === undefined
    ? rejected(`field ${field} is ${preview(found.value)}, not a finite number`)
    : ok(value);
}

/** Which payloads mean on and off, and where the state sits in a JSON payload. */
export interface SwitchStateFormat {
  stateOn: string;
  stateOff: string;
  /** Dot path of the state in a JSON payload (`state` for Zigbee2MQTT); absent: the whole payload. */
  stateField?: string | undefined;
}

/**
 * A relay's state (1 on, 0 off) from a state payload. Compared after trimming and ignoring
 * case (`on` = `ON`); booleans and numbers in JSON compare as their text (`true`, `1`), so
 * `stateOn: 'true'` reads Shelly's `"output": true`. Anything else is rejected, not guessed.
 */
export function parseSwitchState(payload: Buffer, format: SwitchStateFormat): Parsed<0 | 1> {
  const tooLarge = sizeProblem(payload);
  if (tooLarge) return tooLarge;
  let text: string;
  if (format.stateField === undefined) {
    text = payload.toString('utf8');
  } else {
    const found = readField(payload, format.stateField);
    if (!found.ok) return found;
    const value = found.value;
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      return rejected(`field ${format.stateField} is ${preview(value)}, not a state`);
    }
    text = String(value);
  }
  const state = text.trim().toLowerCase();
  if (state === format.stateOn.trim().toLowerCase()) return ok(1);
  if (state === format.stateOff.trim().toLowerCase()) return ok(0);
  return rejected(
    `state ${preview(text.trim())} is neither ${JSON.stringify(format.stateOn)} nor ${JSON.stringify(format.stateOff)}`,
  );
}

/** A level command: the plain number, or `{"<commandField>": n}` for devices that take JSON. */
export function levelCommandPayload(deviceValue: number, commandField?: string): string {
  return commandField === undefined ? String(deviceValue) : JSON.stringify({ [commandField]: deviceValue });
}

/**
 * Why `topic` cannot be published to or subscribed to as one exact topic, or undefined:
 * wildcards (`+`, `#`) would match other devices, `$` topics belong to the broker.
 */
export function plainTopicProblem(topic: string): string | undefined {
  if (topic.length === 0) return 'must not be empty';
  if (/[+#]/.test(topic)) return 'must be a plain topic, without the wildcards + and #';
  if (topic.includes('\u0000')) return 'must not contain a NUL character';
  if (topic.startsWith('$')) return 'must not start with $ (broker topics)';
  return undefined;
}

/** The value at a dot path of a JSON payload, or why there is none. */
export function readField(payload: Buffer, field: string): Parsed<unknown> {
  let document: unknown;
  try {
    document = JSON.parse(payload.toString('utf8'));
  } catch {
    return rejected(`payload ${preview(payload.toString('utf8'))} is not JSON (field ${field} expected)`);
  }
  let current = document;
  for (const segment of field.split('.')) {
    if (Array.isArray(current) && /^\d+$/.test(segment)) {
      current = current[Number(segment)];
    } else if (isRecord(current) && Object.hasOwn(current, segment)) {
      current = current[segment];
    } else {
      current = undefined;
    }
    if (current === undefined) return { ok: false, missing: true, reason: `no field ${field}` };
  }
  return ok(current);
}

/** A finite number from a JSON number or a decimal string; undefined for anything else. */
export function toFiniteNumber(value: unknown): number | undefined {
  const number =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && DECIMAL.test(value.trim())
        ? Number(value)
        : NaN;
  return Number.isFinite(number) ? number : undefined;
}

function sizeProblem(payload: Buffer): Parsed<never> | undefined {
  return payload.length > MAX_PAYLOAD_BYTES
    ? rejected(`payload of ${payload.length} bytes is too large (limit ${MAX_PAYLOAD_BYTES})`)
    : undefined;
}

/** A short, printable rendering of a value for messages (payloads can be anything). */
export function preview(value: unknown): string {
  // Numbers as themselves: JSON.stringify would print Infinity and NaN as null.
  const text = typeof value === 'number' ? String(value) : (JSON.stringify(value) ?? String(value));
  return text.length > 40 ? `${text.slice(0, 37)}…` : text;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function ok<T>(value: T): Parsed<T> {
  return { ok: true, value };
}

function rejected(reason: string): Parsed<never> {
  return { ok: false, missing: false, reason };
}
