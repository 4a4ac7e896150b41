import { Counter, Gauge, type Registry } from 'prom-client';

/** One alert channel's figures since the start (src/node/alerts-wiring.ts). */
export interface AlertChannelFigures {
  channel: string;
  /** Alerts the channel took. */
  sent: number;
  /** Attempts that failed (each retry counts). */
  failed: number;
  /** Alerts dropped: the outbox over its limit, or a channel no longer configured. */
  dropped: number;
  /** Alerts waiting now. */
  undelivered: number;
}

/**
 * `homeostat_alerts_{sent,failed,dropped}_total{channel}` and `homeostat_alerts_undelivered{channel}`,
 * read at scrape time: `increase(homeostat_alerts_failed_total[1h]) > 0` or
 * `homeostat_alerts_undelivered > 0` for 15 min says a phone is not hearing of faults.
 */
export function defineAlertMetrics(
  registry: Registry,
  read: () => readonly AlertChannelFigures[] | undefined,
): void {
  const registers = [registry];
  const totals: Array<[name: string, help: string, field: 'sent' | 'failed' | 'dropped']> = [
    ['homeostat_alerts_sent_total', 'Alerts a channel took, since the start', 'sent'],
    [
      'homeostat_alerts_failed_total',
      'Failed attempts to deliver an alert (each retry counts), since the start',
      'failed',
    ],
    [
      'homeostat_alerts_dropped_total',
      'Alerts dropped undelivered (the outbox over its limit), since the start',
      'dropped',
    ],
  ];
  for (const [name, help, field] of totals) {
    new Counter({
      name,
      help,
      labelNames: ['channel'],
      registers,
      collect() {
        this.reset();
        for (const figures of read() ?? []) this.inc({ channel: figures.channel }, figures[field]);
      },
    });
  }
  new Gauge({
    name: 'homeostat_alerts_undelivered',
    help: 'Alerts waiting in the outbox for a channel now',
    labelNames: ['channel'],
    registers,
    collect() {
      this.reset();
      for (const figures of read() ?? []) this.set({ channel: figures.channel }, figures.undelivered);
    },
  });
}
