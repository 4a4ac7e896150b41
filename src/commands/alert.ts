import type { AlertTestResponse } from '../operations/alert-schemas.js';
import { reachRunningDaemon } from './cli-config.js';

/**
 * `homeostat alert test [CHANNEL]`: the running daemon sends a test alert through each of its
 * channels (or the one named) at once, not through the outbox, and this prints what each
 * answered. Exit 0 when every channel took it, 1 when one did not (or no daemon answered).
 */
type Write = (line: string) => void;

export interface AlertTestOptions {
  configPath: string;
  apiUrl?: string;
  channel: string | undefined;
}

export async function alertTestCommand(opts: AlertTestOptions, write: Write, note: Write): Promise<number> {
  const api = await reachRunningDaemon('alert', opts, 'the running daemon sends it', { write, note });
  if (typeof api === 'number') return api;
  const answer = await api.testAlerts(opts.channel === undefined ? {} : { channel: opts.channel });
  if (answer.kind === 'error') {
    write(`homeostat alert: ${answer.message}`);
    return 1;
  }
  if (answer.kind === 'unreachable') {
    write(`homeostat alert: the daemon at ${answer.url}: ${answer.why}`);
    return 1;
  }
  for (const line of resultLines(answer.value.results)) write(line);
  return answer.value.results.every((result) => result.delivered) ? 0 : 1;
}

/** `phone (ntfy): delivered in 312 ms`, `hook (webhook): failed after 4000 ms: …`. */
export function resultLines(results: AlertTestResponse['results']): string[] {
  return results.map(({ channel, type, delivered, answer, tookMs }) =>
    delivered
      ? `${channel} (${type}): delivered in ${tookMs} ms`
      : `${channel} (${type}): failed after ${tookMs} ms: ${answer}`,
  );
}
