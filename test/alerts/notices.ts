/**
 * A raised alert and its resolution, as the channels' tests send them, and what a failed send
 * threw. Not a test file itself.
 */
import assert from 'node:assert/strict';
import { DeliveryError } from '../../src/alerts/channels/index.js';
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

/** What `send` threw (it must throw). */
export async function thrown(promise: Promise<void>): Promise<DeliveryError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof DeliveryError, String(error));
    return error;
  }
  assert.fail('expected the send to fail');
}
