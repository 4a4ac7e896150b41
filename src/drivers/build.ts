/**
 * The driver builder moved to src/kinds/build.ts (each kind builds its own driver). Kept so
 * existing imports keep working; new code imports from kinds/build.js. This module imports
 * kinds (which import drivers), never config.
 */
export {
  buildDrivers,
  createActuatorDriver,
  createSensorDriver,
  type DriverDeps,
  type Drivers,
  type HardwareConfig,
  speedProblem,
} from '../kinds/build.js';
export { driverKey } from '../kinds/registry.js';
