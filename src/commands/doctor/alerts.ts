/**
 * Doctor check: every alert channel can be built, its secret file read, and an email channel's
 * server logs it in (nothing is sent: `homeostat alert test` asks the services).
 */
import { brewfatherUrl } from '../../alerts/brewfather.js';
import { buildChannel } from '../../alerts/channels/index.js';
import type { AlertChannel } from '../../alerts/channels/services.js';
import type { Config } from '../../config/schema.js';
import type { CheckResult } from '../../kinds/types.js';

const NAME = 'alert channels';
/** How long a server may take to log us in, ms (the mail library's own timeouts are longer). */
const VERIFY_TIMEOUT_MS = 8_000;

/** Why `channel`'s server refuses us (connect, TLS, login), or undefined when it would take mail. */
async function verifyProblem(channel: AlertChannel): Promise<string | undefined> {
  if (!channel.verify) return undefined;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer in ${VERIFY_TIMEOUT_MS / 1000} s`)),
      VERIFY_TIMEOUT_MS,
    );
  });
  try {
    await Promise.race([channel.verify(), timeout]);
    return undefined;
  } catch (error) {
    return `alerts.channels.${channel.id}: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    clearTimeout(timer);
  }
}

const SECRET_FIX =
  'put the token in that file, readable by the user running homeostat (chown root:homeostat FILE; chmod 0640 FILE); homeostat regulates anyway, those alerts wait in the outbox';
const SERVER_FIX =
  'fix the server settings (host, port, security, username, passwordFile, caFile); homeostat regulates anyway, those alerts wait in the outbox and are retried';

const failed = (problems: string[], fix: string): CheckResult => ({
  name: NAME,
  status: 'fail',
  detail: problems.join('\n'),
  fix,
});

/** Why a loop's Brewfather stream has nowhere to post (its id file), or nothing. */
function streamProblem({
  loop,
  stream,
}: {
  loop: string;
  stream: Parameters<typeof brewfatherUrl>[1];
}): string[] {
  try {
    brewfatherUrl(loop, stream);
    return [];
  } catch (error) {
    return [error instanceof Error ? error.message : String(error)];
  }
}

/**
 * Whether each of alerts.channels has what it needs at start: its token or key file a regular,
 * non-empty file this user can read; an SMTP server that takes its login.
 */
export async function checkAlerts(config: Config): Promise<CheckResult> {
  const channels = Object.entries(config.alerts.channels);
  const streams = Object.entries(config.loops).flatMap(([loop, section]) =>
    section.brewfather ? [{ loop, stream: section.brewfather }] : [],
  );
  if (channels.length === 0 && streams.length === 0) {
    return { name: NAME, status: 'skip', detail: 'none (alerts.channels, loops.<id>.brewfather)' };
  }
  const built = channels.map(([id, channel]) => buildChannel(id, channel));
  const secretProblems = [...built.flatMap((b) => b.problem ?? []), ...streams.flatMap(streamProblem)];
  if (secretProblems.length > 0) return failed(secretProblems, SECRET_FIX);
  const serverProblems = (await Promise.all(built.map((b) => verifyProblem(b.channel)))).flatMap(
    (p) => p ?? [],
  );
  if (serverProblems.length > 0) return failed(serverProblems, SERVER_FIX);
  const names = [
    ...channels.map(([id, channel]) => `${id} (${channel.type})`),
    ...streams.map(({ loop }) => `brewfather/${loop}`),
  ].join(', ');
  const verified = channels.some(([, channel]) => channel.type === 'email')
    ? ', the SMTP server answers'
    : '';
  return {
    name: NAME,
    status: 'ok',
    detail: `${names}: secrets readable${verified}; homeostat alert test sends a test through each`,
  };
}
