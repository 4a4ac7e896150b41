/** "90s", "30m", "2h", "7d" → ms; throws a readable error otherwise. */
export function parseDurationMs(text: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(s|m|h|d)$/.exec(text.trim());
  if (!match) throw new Error(`"${text}" is not a duration: use a number and s, m, h or d (e.g. 2h)`);
  const unitMs = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as 's' | 'm' | 'h' | 'd'];
  return Number(match[1]) * unitMs;
}
