import { z } from 'zod';

/** The SQLite store: where, how often it is written, how long history is kept. */
export const storageSchema = z
  .strictObject({
    path: z
      .string()
      .min(1)
      .optional()
      .describe(
        'SQLite database file; --db on the command line wins over it. Default: ' +
          '$STATE_DIRECTORY/homeostat.db (set by systemd: /var/lib/homeostat), else ./var/homeostat.db.',
      ),
    memoryFlushS: z
      .number()
      .gt(0)
      .default(600)
      .describe(
        'Seconds between writes of controller memory, status, history and routine events, batched in ' +
          'one transaction to spare SD cards; a crash loses at most this much of them (setpoints and ' +
          'modes are written at once). Every commit rewrites whole pages, so fewer commits write less: ' +
          'about 0.6–0.9 MB per loop per day at 600, 3–5 MB at 30 (npm run bench:storage). Default 600.',
      ),
    rawRetentionS: z
      .number()
      .gt(0)
      .default(7 * 86_400)
      .describe('Seconds history keeps every reading; older ones are downsampled. Default 604800 (7 days).'),
    downsampleS: z
      .number()
      .int()
      .min(0)
      .default(300)
      .describe(
        'Seconds per average that replaces readings older than rawRetentionS (setpoint, measured and ' +
          'output averaged, the most frequent action); 0 deletes them instead. Default 300.',
      ),
    downsampledRetentionS: z
      .number()
      .gt(0)
      .default(365 * 86_400)
      .describe('Seconds history keeps the averages. Default 31536000 (365 days).'),
    eventRetentionS: z
      .number()
      .gt(0)
      .default(90 * 86_400)
      .describe('Seconds the event log keeps an event. Default 7776000 (90 days).'),
  })
  .describe('Where desired state, controller memory and history are kept.');

export type StorageConfig = z.output<typeof storageSchema>;

/** The storage block of a file that writes none (retention's defaults when called without one). */
export const STORAGE_DEFAULTS: Readonly<StorageConfig> = Object.freeze(storageSchema.parse({}));
