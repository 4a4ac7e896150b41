/**
 * The MQTT contract's JSON payloads as tests read them (docs/home-assistant.md): what a test
 * parses from `<base>/<loop>/state` and `<base>/<loop>/result`. One copy, so the integration
 * tests and the fault suite read the same shape.
 */

/** The contract's `<loop>/state` JSON. */
export interface StatePayload {
  loop: string;
  mode: string;
  setpoint: number;
  measured: number | null;
  output: number;
  action: string;
  generation: number;
  observedGeneration: number;
  actuators?: unknown;
  conditions: {
    type: string;
    status: string;
    reason: string;
    message: string;
    lastTransitionTime: string;
  }[];
  updatedAt: string;
}

/** The contract's `<loop>/result` JSON. */
export interface ResultPayload {
  loop: string;
  accepted: boolean;
  change?: { setpoint?: number; mode?: string; faultReset?: boolean };
  reason?: string;
  generation?: number;
  requestId?: string;
  at: string;
}
