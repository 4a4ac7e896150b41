/** A loop's alert rules in force: the node's (alerts.rules) with the loop's own over them, in ms. */
import type { Config } from '../config/schema.js';
import type { LoopAlertRules } from './rules.js';

const ms = (seconds: number | false | undefined): number | undefined =>
  seconds === false || seconds === undefined ? undefined : seconds * 1000;

/** `loop` undefined: the node's own rules (the database's streak). Undefined for an unknown loop. */
export function rulesOf(config: Config, loop: string | undefined): LoopAlertRules | undefined {
  const node = config.alerts.rules;
  if (loop === undefined) {
    return {
      delaysMs: { storage: ms(node.storageForS), peer: ms(config.alerts.peers?.offlineForS) },
      autotune: false,
      profile: false,
    };
  }
  const section = config.loops[loop];
  if (!section) return undefined;
  const own = section.alerts ?? {};
  const pick = <K extends 'latchedForS' | 'faultedForS' | 'unconfirmedForS' | 'interlockForS'>(key: K) =>
    ms(own[key] === undefined ? node[key] : own[key]);
  const band = own.band;
  return {
    delaysMs: {
      latched: pick('latchedForS'),
      faulted: pick('faultedForS'),
      unconfirmed: pick('unconfirmedForS'),
      interlock: pick('interlockForS'),
      storage: ms(node.storageForS),
    },
    ...(band ? { band: { low: band.low, high: band.high, forMs: band.forS * 1000 } } : {}),
    autotune: own.autotune ?? node.autotune,
    profile: own.profile ?? node.profile,
  };
}
