/** A raised alert and its resolution, as the channels' tests send them. Not a test file itself. */
import type { AlertNotice } from '../../src/alerts/notice.js';

export const RAISED: AlertNotice = {
  id: 'cellar/fermenter/faulted/1767225600000/raised',
  streakId: 'cellar/fermenter/faulted/1767225600000',
  node: 'cellar',
  loop: 'fermenter',
  kind: 'faulted',
  phase: 'raised',
  severity: 'critical',
  title: 'Fermenter: sensor fault, actuators safe',
  message: 'actuators held at their safe state: reading stale for 26 s (limit 25 s), 18.2 °C',
  atMs: 1_767_225_660_000,
};
export const RESOLVED: AlertNotice = {
  ...RAISED,
  id: `${RAISED.streakId}/resolved`,
  phase: 'resolved',
  suppressed: 2,
};
