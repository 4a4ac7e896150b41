/**
 * `homeostat doctor`: checks what the daemon needs from the machine (a valid config, GPIO pins,
 * each hardware kind's own check such as the 1-Wire bus or a file_value's file, the broker, a
 * writable database, the HTTP API's port, systemd's notify socket) and says how to fix each problem. Every check is
 * a function returning {@link CheckResult}s, so tests run them on fixture trees; none of them
 * writes anything a running daemon uses.
 *
 * This file is the runner; each check family lives in doctor/ (config, gpio, kinds, broker,
 * database, systemd) and is exported from here.
 */
import type { CheckResult } from '../kinds/types.js';
import { checkAlerts } from './doctor/alerts.js';
import { checkBroker } from './doctor/broker.js';
import { checkConfig } from './doctor/config.js';
import { checkDatabase } from './doctor/database.js';
import { checkGpio } from './doctor/gpio.js';
import { checkHttp } from './doctor/http.js';
import { checkKernelSensors } from './doctor/kernel-sensors.js';
import { checkKinds } from './doctor/kinds.js';
import { checkNotify } from './doctor/systemd.js';

export type { CheckResult, CheckStatus } from '../kinds/types.js';
export { checkAlerts } from './doctor/alerts.js';
export { BROKER_TIMEOUT_MS, brokerFix, checkBroker } from './doctor/broker.js';
export { checkConfig } from './doctor/config.js';
export { checkDatabase } from './doctor/database.js';
export { checkGpio } from './doctor/gpio.js';
export { checkHttp } from './doctor/http.js';
export { checkKernelSensors } from './doctor/kernel-sensors.js';
export { checkKinds, checkOneWire, type KindCheckDeps } from './doctor/kinds.js';
export type { CanWrite } from './doctor/shared.js';
export { checkNotify } from './doctor/systemd.js';

// ---------------------------------------------------------------------------------------
// The command

/** One line per check (`✓`, `✗`, `–`), a `  fix:` line after each failure. */
export function formatCheck(result: CheckResult): string[] {
  const mark = result.status === 'ok' ? '✓' : result.status === 'fail' ? '✗' : '–';
  const [first = '', ...more] = result.detail.split('\n');
  const lines = [`${mark} ${result.name}: ${first}`, ...more.map((line) => `    ${line}`)];
  if (result.status === 'fail' && result.fix) lines.push(`  fix: ${result.fix}`);
  return lines;
}

/** Runs every check and prints them; 0 when none failed, 1 otherwise. */
export async function doctorCommand(
  opts: { configPath: string; dbPath: string; env?: NodeJS.ProcessEnv; brokerTimeoutMs?: number },
  write: (line: string) => void,
): Promise<number> {
  const env = opts.env ?? process.env;
  const results: CheckResult[] = [];
  const report = (checks: CheckResult[]) => {
    for (const check of checks) {
      results.push(check);
      for (const line of formatCheck(check)) write(line);
    }
  };
  const { result, config } = checkConfig(opts.configPath);
  report([result]);
  if (config) {
    report(await checkGpio(config));
    report(await checkKinds(config));
    report([await checkKernelSensors(config)]);
    report([
      await checkBroker(config, {
        env,
        ...(opts.brokerTimeoutMs ? { timeoutMs: opts.brokerTimeoutMs } : {}),
      }),
    ]);
    report([await checkHttp(config)]);
    report([await checkAlerts(config)]);
  } else {
    report([{ name: 'GPIO, 1-Wire, MQTT broker, HTTP API', status: 'skip', detail: 'need a valid config' }]);
  }
  report([await checkDatabase(opts.dbPath)]);
  report([checkNotify(env)]);
  return results.some((r) => r.status === 'fail') ? 1 : 0;
}
