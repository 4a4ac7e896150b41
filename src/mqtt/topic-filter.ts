/**
 * Whether `topic` matches the subscription `filter` (MQTT 5 §4.7): `+` is one level, a final
 * `#` any number including none (`a/#` matches `a`); wildcards at the first level do not match
 * `$`-topics (`$SYS/…`). Shared subscriptions (`$share/…`) are not supported.
 */
export function topicMatchesFilter(filter: string, topic: string): boolean {
  return levelsMatch(filter.split('/'), topic.split('/'));
}

/** topicMatchesFilter on levels already split (the receive path splits each topic once). */
export function levelsMatch(filterLevels: readonly string[], topicLevels: readonly string[]): boolean {
  const first = filterLevels[0];
  if (topicLevels[0]?.startsWith('$') && (first === '+' || first === '#')) return false;
  for (let i = 0; i < filterLevels.length; i++) {
    const level = filterLevels[i];
    if (level === '#') return true;
    if (i >= topicLevels.length) return false;
    if (level !== '+' && level !== topicLevels[i]) return false;
  }
  return filterLevels.length === topicLevels.length;
}
