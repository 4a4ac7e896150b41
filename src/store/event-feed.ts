import type { StoredEvent } from './desired-records.js';

/**
 * Every event the stores record, told as it happens (the HTTP API's Server-Sent Events stream,
 * later any other live view of the event log). The stores announce an event once it counts:
 * DesiredStore after the transaction that wrote it committed (a rolled-back event is never
 * told), StateStore when it is added (it waits for a flush but did happen now).
 *
 * Listeners run synchronously inside the store operation that recorded the event, after its
 * commit: they must be quick, and whatever they throw is caught here, so a broken listener
 * never fails a store operation (nor the command or control cycle behind it).
 */
export class EventFeed {
  private readonly listeners = new Set<(event: StoredEvent) => void>();

  /**
   * `onError`: told of what a listener threw (the supervisor logs it); without it the error is
   * dropped. It must not throw either; if it does, that is dropped too.
   */
  constructor(private readonly onError?: (error: unknown) => void) {}

  /**
   * Calls `listener` with every event announced from now on. Returns the unsubscribe function
   * (calling it twice is harmless). The same function subscribed twice is called once.
   */
  subscribe(listener: (event: StoredEvent) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Tells every listener; a listener that throws is skipped, the others still hear it. */
  announce(event: StoredEvent): void {
    // A copy: a listener unsubscribing (or subscribing) while told does not change this round.
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (error) {
        try {
          this.onError?.(error);
        } catch {
          // Nothing left to tell: the store operation must still succeed.
        }
      }
    }
  }

  /** How many listeners are subscribed (for tests and metrics). */
  get listenerCount(): number {
    return this.listeners.size;
  }
}
