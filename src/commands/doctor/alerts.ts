/** Doctor check: every alert channel can be built, its secret file read (nothing is sent). */
import { buildChannel } from '../../alerts/channels/index.js';
import type { Config } from '../../config/schema.js';
import type { CheckResult } from '../../kinds/types.js';

const NAME = 'alert channels';

/**
 * Whether each of alerts.channels has what it needs at start: its token or key file a regular,
 * non-empty file this user can read. Sends nothing: `homeostat alert test` asks the services.
 */
export function checkAlerts(config: Config): CheckResult {
  const channels = Object.entries(config.alerts.channels);
  if (channels.length === 0) return { name: NAME, status: 'skip', detail: 'none (alerts.channels)' };
  const problems = channels.flatMap(([id, channel]) => buildChannel(id, channel).problem ?? []);
  if (problems.length > 0) {
    return {
      name: NAME,
      status: 'fail',
      detail: problems.join('\n'),
      fix: 'put the token in that file, readable by the user running homeostat (chown root:homeostat FILE; chmod 0640 FILE); homeostat regulates anyway, those alerts wait in the outbox',
    };
  }
  const names = channels.map(([id, channel]) => `${id} (${channel.type})`).join(', ');
  return {
    name: NAME,
    status: 'ok',
    detail: `${names}: secrets readable; homeostat alert test sends a test through each`,
  };
}
