/**
 * A Brewfather custom stream's post, pure: the loop's temperature, the recorded values its
 * fields name, and a comment (the setpoint and what the loop does, or why there is no reading).
 * Field names and units are Brewfather's (https://docs.brewfather.app/integrations/custom-stream).
 * Also where to post: the URL from the stream id file.
 */
import { readCappedFile } from '../capped-file.js';
import { BREWFATHER_VALUE_FIELDS, type BrewfatherConfig } from '../config/schema/brewfather.js';

export type BrewfatherBody = Record<string, string | number>;

export interface BrewfatherSample {
  loop: string;
  /** The loop's unit (°C or °F). */
  unit: string;
  setpoint: number;
  action: string;
  /** The loop's reading; undefined with `fault` saying why. */
  measured: number | undefined;
  fault?: string | undefined;
  /** A recorded sensor's fresh value now, or undefined. */
  recorded: (sensor: string) => number | undefined;
}

/** Values to 3 decimals (a gravity of 1.0125 keeps its last digit that means anything). */
const rounded = (value: number) => Math.round(value * 1000) / 1000;

export function brewfatherBody(config: BrewfatherConfig, sample: BrewfatherSample): BrewfatherBody {
  const body: BrewfatherBody = { name: config.name ?? sample.loop };
  if (sample.measured !== undefined) body.temp = rounded(sample.measured);
  body.temp_unit = sample.unit === '°F' ? 'F' : 'C';
  for (const field of BREWFATHER_VALUE_FIELDS) {
    const sensor = config[field];
    const value = sensor === undefined ? undefined : sample.recorded(sensor);
    if (value !== undefined && Number.isFinite(value)) body[field] = rounded(value);
  }
  if (body.gravity !== undefined) body.gravity_unit = config.gravityUnit;
  if (body.pressure !== undefined) body.pressure_unit = config.pressureUnit;
  if (config.beer !== undefined) body.beer = config.beer;
  body.comment =
    sample.measured === undefined
      ? `no reading: ${sample.fault ?? 'the sensor gave none'}`
      : `setpoint ${sample.setpoint} ${sample.unit}, ${sample.action}`;
  return body;
}

/** Largest stream id file accepted, bytes: an id, or the URL around it. */
const MAX_ID_BYTES = 1_024;

/**
 * The URL to post to, from the file: the logging id (`?id=` is added to apiUrl) or the whole
 * URL Brewfather shows. Throws a message naming the loop and the file (never its content).
 */
export function brewfatherUrl(loop: string, config: BrewfatherConfig): string {
  const what = `loops.${loop}.brewfather.streamIdFile`;
  const text = readCappedFile(config.streamIdFile, `${what}: cannot read`, MAX_ID_BYTES)
    .toString('utf8')
    .trim();
  if (/^https?:\/\//.test(text)) {
    try {
      if (new URL(text).searchParams.get('id')) return text;
    } catch {
      // Told below, without the text (it holds the id).
    }
    throw new Error(
      `${what}: ${config.streamIdFile} holds a URL without ?id=: copy the whole URL Brewfather shows`,
    );
  }
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(text)) {
    throw new Error(
      `${what}: ${config.streamIdFile} holds no logging id (letters and digits from Settings → Power-ups → Custom Stream)`,
    );
  }
  return `${config.apiUrl.replace(/\/+$/, '')}/stream?id=${text}`;
}
