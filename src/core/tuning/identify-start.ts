import { type HalfRuleIdentification, identifyHalfRule } from './identify-half-rule.js';
import type { OscillationAnalysis } from './relay-analysis.js';
import type { RelayExperiment } from './relay-experiment.js';

/**
 * The record's fit with the right assumption about its start, pure.
 *
 * At rest (the plant settled with `initialLevel`) the record's first value is the model's
 * steady state: y0 = A + K·u0. That one equation is what tells K and τ apart; near the
 * setpoint the relay's slopes show only K/τ (an integrating plant with a drift looks the
 * same), and the first step is too shallow for its curvature to say much (a kettle: 1.6 °C
 * against 40 °C to ambient). A start not at rest frees the lags' state instead, and K and τ
 * then slide along that ridge: a continuous actuator that was regulating gave K and τ 25 % off
 * together, and once (with a cancelling sum of squares, identify-half-rule.ts) 10⁶.
 *
 * A continuous actuator that was regulating (`restCandidate`) usually has settled: its PID's
 * output at rest is the level the plant rests with. So both fits are made, and the record is
 * taken as starting at rest unless that fit's residual is more than REST_TOLERANCE above the
 * free one's. Measured (test/bench/autotune.ts, regulating starts): a settled loop's two
 * residuals are within 3 % (rest chosen: K, τ within 16 % instead of 26 %); a loop still
 * settling from a cold start fits at rest 2–8× worse (free chosen).
 */
export const REST_TOLERANCE = 1.1;

export interface StartAssumption {
  /** The plant is known to be at rest with the record's initial level (identify-half-rule.ts). */
  startsAtRest: boolean;
  /** Not known to be, but it may be: fit both and take the better (see above). */
  restCandidate?: boolean;
  /** Not at rest: the fit starts no earlier than this (a regulating relay's turn), ms. */
  fitFromMs?: number;
}

export interface RecordIdentification extends HalfRuleIdentification {
  /** Which start the model was fitted with. */
  start: 'rest' | 'free';
}

export function identifyRecord(
  experiment: RelayExperiment,
  analysis: OscillationAnalysis,
  start: StartAssumption,
): RecordIdentification {
  if (start.startsAtRest)
    return { ...identifyHalfRule(experiment, analysis, { startsAtRest: true }), start: 'rest' };
  const free = identifyHalfRule(experiment, analysis, {
    startsAtRest: false,
    ...(start.fitFromMs === undefined ? {} : { fitFromMs: start.fitFromMs }),
  });
  if (!start.restCandidate) return { ...free, start: 'free' };
  const rest = identifyHalfRule(experiment, analysis, { startsAtRest: true });
  return rest.rmsResidual <= free.rmsResidual * REST_TOLERANCE
    ? { ...rest, start: 'rest' }
    : { ...free, start: 'free' };
}
