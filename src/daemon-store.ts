/**
 * The daemon's use of the store moved to src/daemon/ (store.ts, removal-finalizer.ts,
 * cycle-recorder.ts). Kept so existing imports (tests, benches) keep working.
 */
export { CycleRecorder } from './daemon/cycle-recorder.js';
export { finalizeRemovedLoops, lastConfigDefining } from './daemon/removal-finalizer.js';
export { applyConfig, type DaemonStore, storedLoopState } from './daemon/store.js';
