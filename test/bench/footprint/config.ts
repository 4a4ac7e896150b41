/**
 * Configs for the footprint benchmark: N copies of the demo's room loop (a simulated thermal
 * plant, a simulated DS18B20-like sensor read every `SENSOR_PERIOD_S`, a simulated relay, PID),
 * each with its own plant, sensor and heater, optionally with a broker.
 */

/** Sensor period of every generated loop, s (the demo's room_temp). */
export const SENSOR_PERIOD_S = 10;

export function footprintConfigText(loops: number, mqttUrl?: string): string {
  const lines = ['version: 1', 'node:', '  id: footprint', '  name: footprint bench'];
  if (mqttUrl) lines.push('mqtt:', `  url: ${mqttUrl}`);
  lines.push('simulation:', '  plants:');
  for (let i = 0; i < loops; i++) {
    lines.push(
      `    plant_${i}:`,
      '      kind: thermal',
      '      ambient: 10',
      '      timeConstantS: 3600',
      '      deadTimeS: 120',
      '      noise: 0.02',
      '      quantization: 0.0625',
    );
  }
  lines.push('sensors:');
  for (let i = 0; i < loops; i++) {
    lines.push(
      `  temp_${i}:`,
      '    kind: simulated',
      `    plant: plant_${i}`,
      `    periodS: ${SENSOR_PERIOD_S}`,
    );
  }
  lines.push('actuators:');
  for (let i = 0; i < loops; i++) {
    lines.push(
      `  heater_${i}:`,
      '    kind: simulated_relay',
      `    plant: plant_${i}`,
      '    gain: 20',
      '    windowS: 300',
      '    minOnS: 60',
      '    minOffS: 60',
    );
  }
  lines.push('loops:');
  for (let i = 0; i < loops; i++) {
    lines.push(
      `  room_${i}:`,
      `    sensor: temp_${i}`,
      `    raise: heater_${i}`,
      '    mode: heat',
      `    setpoint: ${18 + (i % 5)}`,
      '    limits: { min: 5, max: 30 }',
      '    controller: { type: pid, kp: 0.75, tiS: 960, tdS: 40 }',
    );
  }
  return `${lines.join('\n')}\n`;
}
