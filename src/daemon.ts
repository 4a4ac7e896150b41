/**
 * The daemon moved to src/daemon/ (one file per job; daemon/daemon.ts is the coordinator).
 * Kept so existing imports (tests, benches) keep working; new code imports from daemon/.
 */
export { Daemon, type DaemonEvents, type DaemonOptions, type ReloadOutcome } from './daemon/daemon.js';
