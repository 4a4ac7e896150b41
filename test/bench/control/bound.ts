/**
 * The time-optimal bound: an oracle that knows the plant (and the disturbance, when it hits)
 * and drives a saturating actuator as fast as physics allows. No controller can do better.
 *
 * For an FOPDT plant (K, τ, θ, ambient) it applies full output at the event, and switches to
 * the holding output u_hold = (r − ambient − offset)/K exactly θ before the value reaches the
 * setpoint, so the value arrives at r and stays there:
 *
 *   during θ the plant still sees the old input:   y_θ = F₀ + (y₀ − F₀)·e^{−θ/τ},  F₀ = ambient + K·u_before + offset
 *   then it rises towards F₁ = ambient + K + offset: t_reach = t₀ + θ + τ·ln((F₁ − y_θ)/(F₁ − r))
 *   switch at t_reach − θ.
 *
 * On a relay plant it is a lower bound, not a reachable policy: it holds u_hold continuously.
 */
import type { BenchController, ControllerContext, ControllerSpec } from './controller.js';
import { holdingOutput, type PlantSpec } from './plants.js';

/** When to leave full output, and the level to hold afterwards. */
export interface BoundSwitch {
  switchMs: number;
  holdLevel: number;
}

/**
 * Switch instant of the bound for an event at `eventMs`, with the plant at `valueAtEvent`,
 * the input at `levelBefore` until then, and a forcing offset `offsetC` from then on.
 */
export function boundSwitch(
  plant: PlantSpec,
  setpoint: number,
  eventMs: number,
  valueAtEvent: number,
  levelBefore: number,
  offsetC: number,
): BoundSwitch {
  const { gain, ambientC, timeConstantS: tauS, deadTimeS } = plant;
  const holdLevel = holdingOutput(plant, setpoint, offsetC);
  const forcingBefore = ambientC + gain * levelBefore + offsetC;
  const afterDeadTime = forcingBefore + (valueAtEvent - forcingBefore) * Math.exp(-deadTimeS / tauS);
  const forcingFull = ambientC + gain + offsetC;
  if (afterDeadTime >= setpoint || forcingFull <= setpoint) {
    // Already there (nothing to gain from full output), or unreachable: hold at once.
    return { switchMs: eventMs, holdLevel: Math.min(1, Math.max(0, holdLevel)) };
  }
  const riseS = tauS * Math.log((forcingFull - afterDeadTime) / (forcingFull - setpoint));
  return { switchMs: eventMs + riseS * 1000, holdLevel };
}

interface Segment {
  fromMs: number;
  level: number;
}

class TimeOptimalBound implements BenchController {
  private readonly segments: Segment[];

  constructor({ plant, setpoint, startMs, disturbance }: ControllerContext) {
    // Scenarios start at steady state on ambient with the heater off.
    const step = boundSwitch(plant, setpoint, startMs, plant.ambientC, 0, 0);
    this.segments = [
      { fromMs: startMs, level: 1 },
      { fromMs: step.switchMs, level: step.holdLevel },
    ];
    if (disturbance !== undefined) {
      // The bound holds the setpoint exactly from t_reach on, so it meets the disturbance there.
      const recover = boundSwitch(
        plant,
        setpoint,
        disturbance.atMs,
        setpoint,
        step.holdLevel,
        disturbance.offsetC,
      );
      this.segments.push(
        { fromMs: disturbance.atMs, level: 1 },
        { fromMs: recover.switchMs, level: recover.holdLevel },
      );
    }
  }

  onReading(): void {
    // An oracle: it needs no measurement.
  }

  levelAt(atMs: number): number {
    let level = 0;
    for (const segment of this.segments) if (segment.fromMs <= atMs) level = segment.level;
    return level;
  }

  changeBetween(afterMs: number, beforeMs: number): number | undefined {
    return this.segments.find((s) => s.fromMs > afterMs && s.fromMs < beforeMs)?.fromMs;
  }
}

export const TIME_OPTIMAL_BOUND: ControllerSpec = {
  id: 'bound',
  actuators: ['continuous', 'relay'],
  oracle: true,
  note: 'time-optimal bound: full output, switch to the holding output θ before the value reaches the setpoint (knows plant and disturbance; on relay plants it holds a continuous level, so it is a lower bound only)',
  create: (context) => new TimeOptimalBound(context),
};
