/** What several doctor checks share: the write-permission probe and error text. */
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';

/** Whether this user may write `path` (`fs.access(W_OK)`); injectable because tests run as root. */
export type CanWrite = (path: string) => Promise<boolean>;

export const canWriteFs: CanWrite = (path) =>
  access(path, constants.W_OK).then(
    () => true,
    () => false,
  );

export { failedCheck, messageOf } from '../../kinds/types.js';
