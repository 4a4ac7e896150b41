/**
 * JSON with object keys sorted at every level and `undefined` members dropped, so equal
 * values give equal text whatever their key order. Non-finite numbers become the strings
 * "Infinity"/"-Infinity"/"NaN" instead of JSON's `null`.

 * (Here rather than in config: kinds identify drivers by it, and kinds cannot import config.)
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(canonical(value)) ?? 'null';
}

function canonical(value: unknown): unknown {
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : canonical(item)));
  if (isRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      if (value[key] !== undefined) out[key] = canonical(value[key]);
    }
    return out;
  }
  return value;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
