import type { DesiredRow } from './db.js';

/**
 * What a test was answered, per loop, against what the database holds after a crash or a power
 * cut: every change answered accepted must be stored (the stored setpoint and mode are the
 * last answered ones, or ones sent after them whose answers the cut swallowed; the stored
 * generation is at least the answered one's). Counts the answered changes a cut lost instead of
 * stopping at the first, so a run on a store that loses them (synchronous NORMAL) says how many.
 */

export interface SentChange {
  loop: string;
  setpoint: number;
  mode?: string;
  requestId: string;
}

export interface AnsweredChange extends SentChange {
  generation: number;
}

interface LoopLedger {
  last?: AnsweredChange;
  answeredSinceCheck: AnsweredChange[];
  /** Sent since the last answer; stay allowed until the next answer (a broker may deliver one late). */
  inFlight: SentChange[];
}

export class AnswerLedger {
  answered = 0;
  rejected = 0;
  lost = 0;
  /** Checks at which something answered was missing. */
  checksWithLoss = 0;
  private readonly loops = new Map<string, LoopLedger>();

  constructor(
    loops: readonly string[],
    /** Told of every loss, with the details (test diagnostics). */
    private readonly report: (line: string) => void,
  ) {
    for (const loop of loops) this.loops.set(loop, { answeredSinceCheck: [], inFlight: [] });
  }

  sent(change: SentChange): void {
    this.ledger(change.loop).inFlight.push(change);
  }

  accepted(change: SentChange, generation: number): void {
    const ledger = this.ledger(change.loop);
    const answered = { ...change, generation };
    ledger.last = answered;
    ledger.answeredSinceCheck.push(answered);
    ledger.inFlight = [];
    this.answered += 1;
  }

  /**
   * Compares the stored rows (none: the file or its schema is gone) with what was answered;
   * returns the answered changes lost since the previous check. A loop that lost one is judged
   * from what is stored from then on, so one loss is counted once.
   */
  check(context: string, rows: ReadonlyMap<string, DesiredRow>): number {
    let lostHere = 0;
    for (const [loop, ledger] of this.loops) {
      const row = rows.get(loop);
      const last = ledger.last;
      if (last !== undefined && !holds(row, last, ledger.inFlight)) {
        const lost = Math.max(
          1,
          ledger.answeredSinceCheck.filter((a) => row === undefined || a.generation > row.generation).length,
        );
        lostHere += lost;
        this.report(
          `${context}: ${loop} stored ${row ? `${row.setpoint} ${row.mode} (generation ${row.generation})` : 'nothing'}, ` +
            `answered ${last.setpoint} ${last.mode ?? ''} (generation ${last.generation}): ${lost} answered change(s) lost`,
        );
        delete ledger.last;
      }
      ledger.answeredSinceCheck = [];
    }
    this.lost += lostHere;
    if (lostHere > 0) this.checksWithLoss += 1;
    return lostHere;
  }

  private ledger(loop: string): LoopLedger {
    const ledger = this.loops.get(loop);
    if (!ledger) throw new Error(`AnswerLedger: unknown loop ${loop}`);
    return ledger;
  }
}

/** Whether `row` holds the last answered change (or one sent after it). */
function holds(row: DesiredRow | undefined, last: AnsweredChange, inFlight: SentChange[]): boolean {
  if (row === undefined || row.generation < last.generation) return false;
  return [last, ...inFlight].some(
    (s) => s.setpoint === row.setpoint && (s.mode === undefined || s.mode === row.mode),
  );
}
