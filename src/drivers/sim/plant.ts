/**
 * First-order-plus-dead-time (FOPDT) plant: the usual textbook model of a heated box or a
 * humidified room, and what the simulated sensors and actuators drive.
 *
 *   τ·dy/dt = −(y − ambient) + Σᵢ Kᵢ·uᵢ(t − θ) + Σ active disturbance offsets(t)
 *
 * Inputs are piecewise constant, so between two events (an input change reaching the plant,
 * a disturbance starting or ending) the forcing is constant and the exact solution is
 *
 *   y(t) = target + (y(t₀) − target)·e^{−(t−t₀)/τ},   target = ambient + Σ Kᵢuᵢ + Σ offsets.
 *
 * Integrating segment by segment with this formula (not Euler) makes the result independent
 * of how often the plant is queried, and a step costs one `Math.exp`.
 */

/** Parameters of a {@link FopdtPlant}. */
export interface PlantParams {
  /**
   * `thermal` (default): unbounded value (°C). `humidity`: the value is held within 0..100 (%RH);
   * at a bound it stays there while the forcing pushes past it (condensation, bone-dry air).
   */
  kind?: 'thermal' | 'humidity';
  /** Steady-state value with every input at 0, in the plant's unit. */
  ambient: number;
  /** Value at `startMs`. Default: `ambient`. */
  initial?: number;
  /** Time constant τ, seconds (> 0). */
  timeConstantS: number;
  /** Dead time θ between an input change and its first effect, seconds (>= 0). Default 0. */
  deadTimeS?: number;
  /**
   * Step offsets added to the forcing (open a door, sun on the greenhouse), with no dead time.
   * `atS` is seconds after `startMs`; without `durationS` the offset lasts for ever.
   */
  disturbances?: { atS: number; offset: number; durationS?: number; name?: string }[];
}

interface Input {
  gain: number;
  /** What the input was last set to (what an actuator would report). */
  commanded: number;
  /** What the dynamics currently see (commanded, delayed by the dead time). */
  effective: number;
}

/** Something that changes the forcing at `atMs`: an input change or a disturbance edge. */
interface InputChange {
  atMs: number;
  name: string;
  level: number;
}
interface DisturbanceEdge {
  atMs: number;
  delta: number;
  /** A disturbance's start (with its duration, if it ends) or its end. */
  edge: 'start' | 'end';
  durationMs?: number;
  /** What the config calls it ("window open"), for the log. */
  name?: string;
}

/**
 * A disturbance starting or ending, as the plant applies it (when it is next advanced: at the
 * next sensor read), for the demo to announce ("a window opens").
 */
export interface DisturbanceEvent {
  edge: 'start' | 'end';
  /** When it was due, ms, on the plant's clock. */
  atMs: number;
  /** The plant's ambient with every disturbance in force, before and after this edge. */
  ambientBefore: number;
  ambientAfter: number;
  /** How long a starting disturbance lasts, ms; undefined: for ever. */
  durationMs?: number;
  /** Its name in the config ("window open"), if it has one. */
  name?: string;
}

/** What a plant tells while it runs. */
export interface PlantEvents {
  onDisturbance?: (event: DisturbanceEvent) => void;
}

/** Compact the consumed head of the change queue once it is this long (keeps pruning O(1) amortised). */
const COMPACT_AFTER = 1024;

export class FopdtPlant {
  private readonly ambient: number;
  private readonly timeConstantS: number;
  private readonly deadTimeMs: number;
  private readonly bounded: boolean;
  private readonly inputs = new Map<string, Input>();
  /** Pending input changes, ordered by `atMs` (the time they reach the dynamics). */
  private queue: InputChange[] = [];
  private queueHead = 0;
  /** Disturbance starts and ends, sorted by time; `edgeIndex` is the next one not yet applied. */
  private readonly edges: DisturbanceEdge[];
  private edgeIndex = 0;
  private disturbanceSum = 0;
  private target: number;
  private value: number;
  private lastMs: number;

  /**
   * @param startMs time of `initial`, ms, on the clock the plant is read and driven with (in the
   *   daemon its monotonic clock, so a wall-clock step moves nothing in the simulated world).
   */
  constructor(
    params: PlantParams,
    startMs: number,
    private readonly events: PlantEvents = {},
  ) {
    if (!(params.timeConstantS > 0)) {
      throw new RangeError(`plant: timeConstantS must be > 0, got ${params.timeConstantS}`);
    }
    const deadTimeS = params.deadTimeS ?? 0;
    if (!(deadTimeS >= 0) || !Number.isFinite(deadTimeS)) {
      throw new RangeError(`plant: deadTimeS must be a finite number >= 0, got ${deadTimeS}`);
    }
    if (!Number.isFinite(params.ambient) || !Number.isFinite(startMs)) {
      throw new RangeError('plant: ambient and startMs must be finite numbers');
    }
    this.ambient = params.ambient;
    this.timeConstantS = params.timeConstantS;
    this.deadTimeMs = deadTimeS * 1000;
    this.bounded = params.kind === 'humidity';
    this.value = this.clamp(params.initial ?? params.ambient);
    this.lastMs = startMs;
    this.edges = disturbanceEdges(params.disturbances ?? [], startMs);
    this.target = this.ambient;
    this.applyDueEvents();
  }

  /**
   * Registers an input (an actuator) with its steady-state gain at level 1.
   * `level` (default 0) is in effect immediately, without dead time: the input was already
   * in that state before the simulation started.
   */
  addInput(name: string, gain: number, level = 0): void {
    if (this.inputs.has(name)) throw new Error(`plant: input "${name}" is already registered`);
    if (!Number.isFinite(gain))
      throw new RangeError(`plant: input "${name}": gain must be finite, got ${gain}`);
    checkLevel(name, level);
    this.inputs.set(name, { gain, commanded: level, effective: level });
    this.recomputeTarget();
  }

  /** Whether an input of that name is registered. */
  hasInput(name: string): boolean {
    return this.inputs.has(name);
  }

  /**
   * Changes an input's gain, keeping its level: a reloaded config describing the same actuator
   * differently, on the simulated world that keeps running (the plant is not rebuilt).
   */
  setInputGain(name: string, gain: number): void {
    const input = this.inputs.get(name);
    if (input === undefined) throw new Error(`plant: unknown input "${name}"`);
    if (!Number.isFinite(gain))
      throw new RangeError(`plant: input "${name}": gain must be finite, got ${gain}`);
    input.gain = gain;
    this.recomputeTarget();
  }

  /**
   * Sets input `name` to `level` (0..1) from `atMs` on; the dynamics see it from
   * `atMs + deadTime`. `atMs` must not be before the last time the plant was advanced.
   */
  setInput(name: string, level: number, atMs: number): void {
    const input = this.inputs.get(name);
    if (input === undefined) throw new Error(`plant: unknown input "${name}"`);
    checkLevel(name, level);
    // Advancing first keeps the queue sorted: later calls cannot schedule earlier changes.
    this.advanceTo(atMs, `setInput("${name}")`);
    input.commanded = level;
    this.queue.push({ atMs: atMs + this.deadTimeMs, name, level });
    this.applyDueEvents();
  }

  /** The plant's true value at `atMs` (advances the state; `atMs` must not go backwards). */
  valueAt(atMs: number): number {
    this.advanceTo(atMs, 'valueAt');
    return this.value;
  }

  /** Current level of an input: what it was last set to (not yet necessarily felt, see dead time). */
  inputLevel(name: string): number {
    const input = this.inputs.get(name);
    if (input === undefined) throw new Error(`plant: unknown input "${name}"`);
    return input.commanded;
  }

  private advanceTo(atMs: number, caller: string): void {
    if (!Number.isFinite(atMs)) throw new RangeError(`plant.${caller}: time must be finite, got ${atMs}`);
    if (atMs < this.lastMs) {
      throw new Error(
        `plant.${caller}: time went backwards: asked for ${atMs} ms, plant already at ${this.lastMs} ms`,
      );
    }
    for (let next = this.nextEventMs(); next <= atMs; next = this.nextEventMs()) {
      this.integrate(next);
      this.applyDueEvents();
    }
    this.integrate(atMs);
  }

  /** Exact solution over [lastMs, toMs] with the current (constant) target. */
  private integrate(toMs: number): void {
    if (toMs === this.lastMs) return;
    const decay = Math.exp(-(toMs - this.lastMs) / 1000 / this.timeConstantS);
    // Within a segment the free solution moves monotonically towards the target, so clamping
    // its end point equals integrating the saturated dynamics, and stays sampling-independent.
    this.value = this.clamp(this.target + (this.value - this.target) * decay);
    this.lastMs = toMs;
  }

  private nextEventMs(): number {
    const change = this.queue[this.queueHead];
    const edge = this.edges[this.edgeIndex];
    return Math.min(change?.atMs ?? Number.POSITIVE_INFINITY, edge?.atMs ?? Number.POSITIVE_INFINITY);
  }

  /** Applies every input change and disturbance edge due at or before `lastMs`. */
  private applyDueEvents(): void {
    let changed = false;
    for (let change = this.queue[this.queueHead]; change !== undefined && change.atMs <= this.lastMs; ) {
      this.inputs.get(change.name)!.effective = change.level;
      this.queueHead++;
      changed = true;
      change = this.queue[this.queueHead];
    }
    for (let edge = this.edges[this.edgeIndex]; edge !== undefined && edge.atMs <= this.lastMs; ) {
      this.tellDisturbance(edge);
      this.disturbanceSum += edge.delta;
      this.edgeIndex++;
      changed = true;
      edge = this.edges[this.edgeIndex];
    }
    if (this.queueHead >= COMPACT_AFTER) {
      this.queue = this.queue.slice(this.queueHead);
      this.queueHead = 0;
    }
    if (changed) this.recomputeTarget();
  }

  private tellDisturbance(edge: DisturbanceEdge): void {
    const listener = this.events.onDisturbance;
    if (!listener) return;
    const ambientBefore = this.ambient + this.disturbanceSum;
    try {
      listener({
        edge: edge.edge,
        atMs: edge.atMs,
        ambientBefore,
        ambientAfter: ambientBefore + edge.delta,
        ...(edge.durationMs === undefined ? {} : { durationMs: edge.durationMs }),
        ...(edge.name === undefined ? {} : { name: edge.name }),
      });
    } catch {
      // Telling is for people; the simulated world goes on whatever the listener does.
    }
  }

  private recomputeTarget(): void {
    // Summed afresh (a handful of inputs) rather than incrementally, so days of switching
    // cannot accumulate rounding drift.
    let sum = this.ambient + this.disturbanceSum;
    for (const input of this.inputs.values()) sum += input.gain * input.effective;
    this.target = sum;
  }

  private clamp(value: number): number {
    return this.bounded ? Math.min(100, Math.max(0, value)) : value;
  }
}

function checkLevel(name: string, level: number): void {
  if (!(level >= 0 && level <= 1)) {
    throw new RangeError(`plant: input "${name}": level must be within 0..1, got ${level}`);
  }
}

function disturbanceEdges(disturbances: NonNullable<PlantParams['disturbances']>, startMs: number) {
  const edges: DisturbanceEdge[] = [];
  disturbances.forEach((d, i) => {
    if (!Number.isFinite(d.atS) || !Number.isFinite(d.offset)) {
      throw new RangeError(`plant: disturbances[${i}]: atS and offset must be finite numbers`);
    }
    const atMs = startMs + d.atS * 1000;
    const named = d.name === undefined ? {} : { name: d.name };
    if (d.durationS === undefined) {
      edges.push({ atMs, delta: d.offset, edge: 'start', ...named });
      return;
    }
    if (!(d.durationS >= 0)) {
      throw new RangeError(`plant: disturbances[${i}]: durationS must be >= 0, got ${d.durationS}`);
    }
    const durationMs = d.durationS * 1000;
    edges.push({ atMs, delta: d.offset, edge: 'start', durationMs, ...named });
    edges.push({ atMs: atMs + durationMs, delta: -d.offset, edge: 'end', ...named });
  });
  // Stable sort: a zero-length disturbance starts before it ends.
  return edges.sort((a, b) => a.atMs - b.atMs);
}

/**
 * A disturbance as the demo announces it: `simulated plant room: a disturbance begins, its
 * ambient 10 → 7 °C for 15 min` (the demo's open window), `… the disturbance ends, its ambient
 * 7 → 10 °C`.
 */
export function disturbanceMessage(plantId: string, unit: string, event: DisturbanceEvent): string {
  const value = (v: number) => `${Math.round(v * 100) / 100}`;
  const ambient = `its ambient ${value(event.ambientBefore)} → ${value(event.ambientAfter)} ${unit}`;
  const what = event.name === undefined ? 'a disturbance' : `"${event.name}"`;
  if (event.edge === 'end') return `simulated plant ${plantId}: ${what} ends, ${ambient}`;
  const lasting = event.durationMs === undefined ? 'from now on' : `for ${minutes(event.durationMs)}`;
  return `simulated plant ${plantId}: ${what} begins, ${ambient} ${lasting}`;
}

function minutes(durationMs: number): string {
  const min = durationMs / 60_000;
  return min >= 1 ? `${Math.round(min * 10) / 10} min` : `${Math.round(durationMs / 1000)} s`;
}
