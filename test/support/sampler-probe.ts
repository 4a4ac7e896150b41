/**
 * Whether the sampler (src/runtime/sampler.ts) passes on what a push driver's `readStamped()`
 * carries besides its value and time: the device's liveness and the reason a value is NaN.
 * Issue 22 changes the sampler to pass them on (the quiet-sensor work); until then the loop
 * sees only the value, and an interlock on a contact whose device went offline or sent
 * garbage trips on the NaN, saying "not a number" instead of why. Daemon-level tests ask this
 * first and assert the exact message for the sampler they run on (never a check that cannot fail).
 */
import type { Reading } from '../../src/core/types.js';
import type { SensorDriver } from '../../src/drivers/types.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { Sampler } from '../../src/runtime/sampler.js';
import { silentLogger } from './logger.js';

export interface SamplerPassesOn {
  liveness: boolean;
  whyNotANumber: boolean;
}

/** Reads one stamped reading carrying both through a real Sampler and says which arrived. */
export async function samplerPassesOn(): Promise<SamplerPassesOn> {
  const stamped: Reading = {
    value: Number.NaN,
    atMs: 0,
    liveness: { via: 'probe', maxQuietMs: 1, offlineSinceMs: 0 },
    whyNotANumber: 'probe',
  };
  const driver: SensorDriver = {
    id: 'probe',
    simulated: true,
    read: async () => stamped.value,
    readStamped: async () => ({ ...stamped }),
  };
  let landed: () => void = () => undefined;
  const read = new Promise<void>((resolve) => {
    landed = resolve;
  });
  const sampler = new Sampler({
    clock: new ManualClock(0),
    sensors: [{ driver, periodMs: 60_000 }],
    logger: silentLogger,
    onReading: () => landed(),
  });
  sampler.start();
  await read;
  const latest = sampler.latest('probe');
  await sampler.stop();
  return { liveness: latest?.liveness !== undefined, whyNotANumber: latest?.whyNotANumber !== undefined };
}
