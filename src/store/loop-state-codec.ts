import zlib from 'node:zlib';
import type { LoopStatus } from '../core/status.js';

/**
 * A loop's memory and status as stored in `loop_state`: one deflated blob (state format 1), or
 * the JSON columns version 1 of the schema wrote.
 */

export interface StateRow {
  state: Buffer | string | null;
  memory_json: string | null;
  status_json: string | null;
  saved_at_ms: number;
}

/** First byte of a state blob: 1 = raw deflate of the JSON `[memory, status]` with STATE_DICTIONARY_1. */
const STATE_FORMAT_1 = 1;

/**
 * Preset dictionary of state format 1: text a loop's memory and status JSON usually contains,
 * so that deflate codes it as back-references (a ~2.5 kB state becomes ~250 bytes: one page).
 * Part of the file format: NEVER edit it (blobs written with it could no longer be read);
 * add a format 2 with a new dictionary instead. Its hash is pinned by a test.
 */
export const STATE_DICTIONARY_1 =
  'Invalid","ConfigValid","Applied","SensorMissing","SensorNaN","SensorImplausible","SensorStale",' +
  '"message":"actuators held at their safe state: ","drying","cooling","humidifying","humidity",' +
  '"dehumidify","auto","heat_cool","cool","off","safe-state","retry","drift","BelowSetpoint",' +
  '"AboveSetpoint"," from the setpoint","Off","mode is off","Unknown","NoReading","no usable reading",' +
  '"Pending","an actuator is not (yet) at its wanted level","wanted":1,"observed":1},' +
  '[{"regulating":true,"pid":{"integral":0.1,"derivativePerS":0,"lastMeasured":20.0625,' +
  '"lastAtMs":1767232790000,"lastSetpoint":20,"lastFeedforward":0,"lastOutput":0.1,"lastKp":1,' +
  '"lastTdS":0,"lastSetpointWeight":1},"hysteresisOn":{"raise":false,"lower":false},"relays":{' +
  '"heater":{"windowStartMs":1767232500000,"isOn":false,"pulseEnded":false,"lastSwitchMs":1767225600000}},' +
  '"commands":{"heater":{"level":0,"atMs":1767232500000,"attempts":0,"confirmed":true}},' +
  '"lastActiveMs":{"raise":1767232530000,"lower":1767232530000},"output":0.1,"conditions":[' +
  '{"type":"SensorHealthy","status":"True","reason":"Fresh","message":"reading is fresh and plausible",' +
  '"lastTransitionMs":1767225600000,"observedGeneration":1},{"type":"ActuatorConfirmed","status":"True",' +
  '"reason":"Confirmed","message":"every actuator is at its wanted level","lastTransitionMs":1767232535000,' +
  '"observedGeneration":1},{"type":"Converged","status":"True","reason":"WithinBand",' +
  '"message":"within ±0.5 of the setpoint","lastTransitionMs":1767229730000,"observedGeneration":1},' +
  '{"type":"Faulted","status":"False","reason":"NoFault","message":"no fault","lastTransitionMs":1767225600000,' +
  '"observedGeneration":1},{"type":"Reconciled","status":"True","reason":"CycleSucceeded",' +
  '"message":"desired state applied","lastTransitionMs":1767225600000,"observedGeneration":1}]},' +
  '{"loop":"room","quantity":"temperature","mode":"heat","setpoint":20,"measured":20.0625,' +
  '"measuredAtMs":1767232790000,"output":0.1,"action":"heating","generation":1,"observedGeneration":1,' +
  '"actuators":{"heater":{"wanted":0,"observed":0}},"conditions":[';

const stateDictionary = Buffer.from(STATE_DICTIONARY_1, 'utf8');

/** The stored form of a loop's memory and status (see STATE_FORMAT_1). */
export function encodeLoopState(memory: unknown, status: LoopStatus): Buffer {
  const json = Buffer.from(JSON.stringify([memory ?? null, status]), 'utf8');
  const packed = zlib.deflateRawSync(json, { dictionary: stateDictionary, level: 9 });
  return Buffer.concat([Buffer.from([STATE_FORMAT_1]), packed]);
}

/** Reads a state blob, or the JSON columns version 1 of the schema wrote. Unreadable → undefined. */
export function decodeStateRow(row: StateRow): { memory: unknown; status: LoopStatus | undefined } {
  if (row.state instanceof Uint8Array) {
    try {
      if (row.state[0] !== STATE_FORMAT_1) return { memory: undefined, status: undefined };
      const json = zlib.inflateRawSync(row.state.subarray(1), { dictionary: stateDictionary });
      const [memory, status] = JSON.parse(json.toString('utf8')) as [unknown, LoopStatus | null];
      return { memory: memory ?? undefined, status: status ?? undefined };
    } catch {
      return { memory: undefined, status: undefined };
    }
  }
  return {
    memory: parseJson(row.memory_json),
    status: parseJson(row.status_json) as LoopStatus | undefined,
  };
}

function parseJson(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text) ?? undefined;
  } catch {
    return undefined;
  }
}
