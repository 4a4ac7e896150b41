/**
 * `unknown sensor "prob" (did you mean "probe"?)`: the message of a reference to an id that is
 * not defined, with the closest defined id when one is close enough to be a typo (an edit
 * distance of at most a third of the name, at least 1, and short of the whole name).
 */

/** Levenshtein distance: insertions, deletions and substitutions, one each. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** The defined id `name` most likely meant, or undefined when none is close. */
export function closestId(name: string, known: Iterable<string>): string | undefined {
  const limit = Math.max(1, Math.floor(name.length / 3));
  let best: { id: string; distance: number } | undefined;
  for (const id of known) {
    const d = distance(name.toLowerCase(), id.toLowerCase());
    // Changing every letter of a short name is not a typo ("x" is not "t").
    const typo = d <= limit && d < Math.max(name.length, id.length);
    if (typo && (best === undefined || d < best.distance)) best = { id, distance: d };
  }
  return best?.id;
}

/** `unknown <what> "<name>"`, and the id it was probably meant to be. */
export function unknownRef(what: string, name: string, known: Iterable<string>): string {
  const close = closestId(name, known);
  return `unknown ${what} "${name}"${close === undefined ? '' : ` (did you mean "${close}"?)`}`;
}
