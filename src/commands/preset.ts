import { randomUUID } from 'node:crypto';
import type { ApiAnswer, DaemonApi, WriteResult } from './api-client.js';
import { reachRunningDaemon } from './cli-config.js';

/**
 * `homeostat preset LOOP NAME|none`: selects one of the loop's presets (loops.<id>.presets), or
 * none, through the running daemon's HTTP API (the same command path as MQTT `preset/set` and
 * Home Assistant's preset_mode), and prints its answer. Exit 0 selected (or already), 1 refused,
 * no daemon or no answer, 2 no valid config without --api-url.
 */
type Write = (line: string) => void;

export interface PresetOptions {
  configPath: string;
  apiUrl?: string;
  loop: string;
  /** The preset's name; null for none. */
  preset: string | null;
}

export async function presetCommand(opts: PresetOptions, write: Write, note: Write): Promise<number> {
  const requestId = randomUUID().slice(0, 12);
  const name = opts.preset ?? 'none';
  return sendThroughDaemon(
    { command: 'preset', ...opts },
    (api) => api.preset(opts.loop, { preset: opts.preset, requestId }),
    (result) => {
      const generation = result.generation === undefined ? '' : ` (generation ${result.generation})`;
      if (opts.preset === null) {
        return result.changed === false
          ? `${opts.loop}: no preset was selected; nothing changed${generation}`
          : `${opts.loop}: no preset now; the setpoint stays where the preset left it${generation}`;
      }
      return result.changed === false
        ? `${opts.loop}: preset ${name} already selected${generation}`
        : `${opts.loop}: preset ${name} selected${generation}`;
    },
    { write, note },
  );
}

/**
 * A write through the daemon's API only: a preset or profile is put in force by the running
 * daemon (its answer says whether the loop has it), so without one nothing is sent. A write that
 * got no answer in time may have been applied: it is not resent. Exit codes as presetCommand's.
 */
export async function sendThroughDaemon(
  opts: { command: string; configPath: string; apiUrl?: string; loop: string },
  send: (api: DaemonApi) => Promise<ApiAnswer<WriteResult>>,
  accepted: (result: WriteResult) => string,
  out: { write: Write; note: Write },
): Promise<number> {
  const say = (line: string) => out.write(`homeostat ${opts.command}: ${line}`);
  const api = await reachRunningDaemon(opts.command, opts, 'the running daemon applies it', out);
  if (typeof api === 'number') return api;
  const answer = await send(api);
  if (answer.kind === 'error') {
    say(answer.message);
    return 1;
  }
  if (answer.kind === 'unreachable') {
    say(
      `the daemon at ${answer.url}: ${answer.why}: the change may or may not have been applied; check with homeostat status`,
    );
    return 1;
  }
  const result = answer.value;
  if (!result.accepted) {
    say(`${opts.loop}: refused: ${result.reason ?? 'no reason given'}`);
    return 1;
  }
  out.write(accepted(result));
  return 0;
}
