import type { ActuatorSpec } from '../../core/loop-spec.js';
import { DEFAULT_MAX_HALF_BAND, type RelayFields, resolveRelayBand } from '../fields.js';
import { ACTUATOR_MONITORS } from '../monitors/registry.js';
import type { LoopUse } from '../types.js';

/** The actuator monitors' parts of the spec (kinds/monitors/), for each of their fields the section sets. */
function actuatorMonitorSpecs(section: object): Partial<ActuatorSpec> {
  const fields = section as Record<string, unknown>;
  const spec: Partial<ActuatorSpec> = {};
  for (const monitor of ACTUATOR_MONITORS) {
    const value = fields[monitor.key];
    if (value !== undefined)
      Object.assign(spec, (monitor.spec as (value: unknown) => Partial<ActuatorSpec>)(value));
  }
  return spec;
}

/**
 * Relay kinds: 0 or 1, their band resolved (a kind with more to resolve calls resolveRelayBand
 * itself), their safeState as a level, their timing and band as the core's spec.
 */
export const relayOutput = {
  output: 'relay' as const,
  resolve: resolveRelayBand,
  safeLevel: (relay: RelayFields): number => (relay.safeState === 'on' ? 1 : 0),
  spec: (id: string, relay: RelayFields, loop: LoopUse): ActuatorSpec => ({
    id,
    kind: 'relay',
    safeLevel: relay.safeState === 'on' ? 1 : 0,
    timeProportioning: {
      windowMs: relay.windowS * 1000,
      minOnMs: relay.minOnS * 1000,
      minOffMs: relay.minOffS * 1000,
    },
    ...relayBand(relay, loop),
    ...(relay.modulationDefaulted ? { modulationDefaulted: true as const } : {}),
    ...actuatorMonitorSpecs(relay),
  }),
};

/**
 * Band modulation in the core's unit: the band is one of the PID output, so band (loop unit)
 * times kp. A written `modulation: band` is validated (a pid controller, kp·band < 0.5); the
 * default one is not, so it is narrowed to DEFAULT_MAX_HALF_BAND, and without a PID (a
 * hysteresis controller switches the relay itself) there is no band.
 */
function relayBand(relay: RelayFields, loop: LoopUse): Pick<ActuatorSpec, 'band'> {
  if (relay.modulation !== 'band' || loop.pidKp === undefined) return {};
  return { band: { halfBand: Math.min(loop.pidKp * relay.band, DEFAULT_MAX_HALF_BAND) } };
}

interface ContinuousFields {
  safeLevel: number;
  maxOnS?: number | undefined;
}

/** Continuous kinds: any level 0..1, their safeLevel, and only the maxOnS limit (no starts to cap). */
export const continuousOutput = {
  output: 'continuous' as const,
  safeLevel: (actuator: ContinuousFields): number => actuator.safeLevel,
  spec: (id: string, actuator: ContinuousFields): ActuatorSpec => ({
    id,
    kind: 'continuous',
    safeLevel: actuator.safeLevel,
    ...actuatorMonitorSpecs(actuator),
  }),
};

/** For kinds whose parsed section needs no further resolution. */
export const asParsed = <T>(raw: T): T => raw;

/** An MQTT actuator without a dead man's switch, as `homeostat safe` reports it. */
export const NO_DEAD_MAN =
  'no dead man’s switch: if it was not reached, it stays as it is until homeostat is back';
