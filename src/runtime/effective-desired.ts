/**
 * The desired state in force moved to core (core/schedule/effective-desired.ts: it is pure); the
 * command path still reaches it here.
 */
export { type ManualStateNow, manualStateNow } from '../core/schedule/effective-desired.js';
