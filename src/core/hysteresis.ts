/**
 * On/off (bang-bang) control with hysteresis, the rule of Home Assistant's generic_thermostat:
 * a heater switches on when the value is at least `coldTolerance` below the setpoint and off
 * when it is at least `hotTolerance` above it; in between it keeps its state. For an actuator
 * that lowers the quantity (a cooler) the roles mirror.
 */
export interface HysteresisParams {
  /** How far below the setpoint (unit of the quantity) a heater turns on. Default in config 0.3. */
  coldTolerance: number;
  /** How far above the setpoint a heater turns off. Default in config 0.3. */
  hotTolerance: number;
}

export function hysteresisStep(
  params: HysteresisParams,
  wasOn: boolean,
  setpoint: number,
  measured: number,
  direction: 'raise' | 'lower' = 'raise',
): boolean {
  const tooCold = setpoint - measured >= params.coldTolerance;
  const tooHot = measured - setpoint >= params.hotTolerance;
  if (direction === 'raise') {
    if (wasOn) return !tooHot;
    return tooCold;
  }
  if (wasOn) return !tooCold;
  return tooHot;
}
