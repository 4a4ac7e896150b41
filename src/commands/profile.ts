import { randomUUID } from 'node:crypto';
import type { ProfileBody } from './api-client.js';
import { sendThroughDaemon } from './preset.js';

/**
 * `homeostat profile LOOP start NAME|pause|resume|stop`: starts one of the loop's profiles
 * (loops.<id>.profiles), or pauses, resumes or stops the started one, through the running
 * daemon's HTTP API (the same command path as MQTT `profile/set` and Home Assistant's profile
 * select and buttons), and prints its answer. Exit codes as `homeostat preset`'s.
 */
type Write = (line: string) => void;

export type ProfileAction = { action: 'start'; name: string } | { action: 'pause' | 'resume' | 'stop' };

export interface ProfileOptions {
  configPath: string;
  apiUrl?: string;
  loop: string;
  command: ProfileAction;
}

/** The words after the loop as typed; undefined when they are not one of the four commands. */
export function parseProfileArgs(words: readonly string[]): ProfileAction | undefined {
  const [action, name, ...extra] = words;
  if (extra.length > 0) return undefined;
  if (action === 'start') return name ? { action, name } : undefined;
  if (action === 'pause' || action === 'resume' || action === 'stop') {
    return name === undefined ? { action } : undefined;
  }
  return undefined;
}

export async function profileCommand(opts: ProfileOptions, write: Write, note: Write): Promise<number> {
  const body: ProfileBody = { ...opts.command, requestId: randomUUID().slice(0, 12) };
  const { command, loop } = opts;
  return sendThroughDaemon(
    { command: 'profile', configPath: opts.configPath, apiUrl: opts.apiUrl, loop },
    (api) => api.profile(loop, body),
    (result) => {
      const generation = result.generation === undefined ? '' : ` (generation ${result.generation})`;
      const unchanged = result.changed === false;
      switch (command.action) {
        case 'start':
          return unchanged
            ? `${loop}: profile ${command.name} already started${generation}`
            : `${loop}: profile ${command.name} started${generation}`;
        case 'pause':
          return unchanged
            ? `${loop}: nothing to pause (no profile running, or it already is paused)${generation}`
            : `${loop}: profile paused: it holds its setpoint until resumed${generation}`;
        case 'resume':
          return unchanged
            ? `${loop}: nothing to resume (no profile is paused)${generation}`
            : `${loop}: profile resumed${generation}`;
        case 'stop':
          return unchanged
            ? `${loop}: nothing to stop (no profile is started)${generation}`
            : `${loop}: profile stopped: the schedule or the manual setpoint is in force again${generation}`;
      }
    },
    { write, note },
  );
}
