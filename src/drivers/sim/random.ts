/**
 * A small seeded PRNG so simulated noise is reproducible: the same seed gives the same
 * sequence on every run and platform (unlike `Math.random`).
 *
 * Uniforms come from mulberry32 (32-bit state, period 2^32 — plenty for sensor noise);
 * normals from the Box–Muller transform, which yields two per pair of uniforms, so the
 * second is kept for the next call.
 */
export class Random {
  private state: number;
  private spareGaussian: number | undefined;

  /** @param seed any number; only its low 32 bits matter. */
  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    // mulberry32, by Tommy Ettinger (public domain).
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Standard normal (mean 0, standard deviation 1). */
  gaussian(): number {
    if (this.spareGaussian !== undefined) {
      const spare = this.spareGaussian;
      this.spareGaussian = undefined;
      return spare;
    }
    // 1 - next() is in (0, 1], so the logarithm stays finite.
    const radius = Math.sqrt(-2 * Math.log(1 - this.next()));
    const angle = 2 * Math.PI * this.next();
    this.spareGaussian = radius * Math.sin(angle);
    return radius * Math.cos(angle);
  }
}

/** A stable 32-bit seed from a string (FNV-1a), so e.g. each sensor id gets its own default stream. */
export function seedFromString(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
