import { performance } from 'node:perf_hooks';

export interface CommandQueueOptions<T> {
  /** Handles one item; a throw is passed to `onError` and the queue goes on. */
  handle: (item: T) => void;
  /** Called at once, instead of queueing, for an item that arrives while the queue is full. */
  overflow: (item: T) => void;
  onError: (error: unknown) => void;
  /** Most items waiting; default 1000. */
  maxQueued?: number;
  /** Longest run of handling before yielding to the event loop, ms; default 5. */
  sliceMs?: number;
  /** How a slice yields; default setImmediate (timers and IO run in between). Tests pass `fn => fn()`. */
  schedule?: (fn: () => void) => void;
  /** `whenRoom` holds its callers while this many or more wait; default 100. */
  highWater?: number;
}

/** Default bound of the command queue: beyond it, commands are answered "busy" unread. */
export const DEFAULT_MAX_QUEUED_COMMANDS = 1_000;

/**
 * Commands are handled off the MQTT client's receive path, in slices of a few milliseconds.
 * MQTT.js handles every packet of a received chunk in one turn of the event loop; a burst of
 * a thousand commands in one TCP read would otherwise be one stall of 50-100 ms, delaying relay
 * pulse ends and sensor timeouts. Bounded: a flood beyond `maxQueued` waiting commands is
 * answered at once by `overflow` (a rejection, no parsing, no store), so memory stays flat.
 * First in, first out.
 */
export class CommandQueue<T> {
  private items: T[] = [];
  private head = 0;
  private scheduled = false;
  private idleWaiters: Array<() => void> = [];
  private roomWaiters: Array<() => void> = [];
  private readonly highWater: number;
  private readonly maxQueued: number;
  private readonly sliceMs: number;
  private readonly schedule: (fn: () => void) => void;

  constructor(private readonly opts: CommandQueueOptions<T>) {
    this.maxQueued = opts.maxQueued ?? DEFAULT_MAX_QUEUED_COMMANDS;
    this.sliceMs = opts.sliceMs ?? 5;
    this.schedule = opts.schedule ?? ((fn) => void setImmediate(fn));
    this.highWater = opts.highWater ?? 100;
  }

  /**
   * Calls `fn` now if fewer than `highWater` items wait, else once the queue has drained to half
   * of that. The receive side uses it for backpressure: the MQTT client reads no further packet
   * until `fn` runs, so a flood waits in the socket and at the broker, not in our memory.
   */
  whenRoom(fn: () => void): void {
    if (this.size < this.highWater) fn();
    else this.roomWaiters.push(fn);
  }

  /** Items waiting. */
  get size(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    if (this.size >= this.maxQueued) {
      this.run(this.opts.overflow, item);
      return;
    }
    this.items.push(item);
    if (this.scheduled) return;
    this.scheduled = true;
    this.schedule(() => this.drain());
  }

  /** Resolves once nothing is waiting (at once if nothing is). */
  idle(): Promise<void> {
    if (this.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private drain(): void {
    const startMs = performance.now();
    while (this.size > 0) {
      const item = this.items[this.head] as T;
      this.items[this.head] = undefined as T; // let it be collected
      this.head += 1;
      this.run(this.opts.handle, item);
      if (performance.now() - startMs >= this.sliceMs) break;
    }
    if (this.roomWaiters.length > 0 && this.size <= this.highWater / 2) {
      const waiters = this.roomWaiters;
      this.roomWaiters = [];
      for (const resume of waiters) resume();
    }
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    if (this.size > 0) {
      this.schedule(() => this.drain());
      return;
    }
    this.items = [];
    this.head = 0;
    this.scheduled = false;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private run(fn: (item: T) => void, item: T): void {
    try {
      fn(item);
    } catch (error) {
      this.opts.onError(error);
    }
  }
}
