/**
 * Seeded pseudo-random numbers for the synthetic generator. Never `Math.random`: the same seed
 * must give the same country, byte for byte.
 *
 * `Prng` is sfc32 (Chris Doty-Humphrey's Small Fast Counting generator): 128 bits of state,
 * passes PractRand, and every step is a handful of 32-bit integer operations. Each consumer
 * (the world, the settlement plan, the buildings) takes its own stream, so that drawing one
 * more number in one place does not shift every value drawn elsewhere.
 */

/** splitmix32 step: spreads a seed over the state so that nearby seeds give unrelated streams. */
function splitmix32(x: number): number {
  x = (x + 0x9e3779b9) | 0;
  let z = x;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/** Stateless 32-bit hash of up to three integers: noise lattices and per-cell decisions. */
function hash32(a: number, b: number, c = 0): number {
  let h = splitmix32(a ^ 0x5bd1e995);
  h = splitmix32(h ^ b);
  h = splitmix32(h ^ c);
  return h;
}

/** hash32 as a number in [0, 1). */
export function hashUnit(a: number, b: number, c = 0): number {
  return hash32(a, b, c) / 4294967296;
}

export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  /** `seed` is the user's seed; `stream` names an independent sequence drawn from it. */
  constructor(seed: number, stream = 0) {
    this.a = splitmix32(seed);
    this.b = splitmix32(this.a ^ stream);
    this.c = splitmix32(this.b + 0x6a09e667);
    this.d = 1;
    // The first outputs of a freshly seeded sfc32 are correlated with the seed: discard them.
    for (let i = 0; i < 12; i++) this.uint32();
  }

  uint32(): number {
    const a = this.a,
      b = this.b,
      c = this.c,
      d = this.d;
    const t = (((a + b) | 0) + d) | 0;
    this.d = (d + 1) | 0;
    this.a = b ^ (b >>> 9);
    this.b = (c + (c << 3)) | 0;
    this.c = (((c << 21) | (c >>> 11)) + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.uint32() / 4294967296;
  }

  /** Uniform in [lo, hi). */
  range(lo: number, hi: number): number {
    return lo + this.next() * (hi - lo);
  }

  /** Integer in [lo, hi], both included. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(values: readonly T[]): T {
    return values[Math.floor(this.next() * values.length)];
  }

  /** Index drawn with probability proportional to `weights[i]`. */
  weighted(weights: ArrayLike<number>, total: number): number {
    let r = this.next() * total;
    const last = weights.length - 1;
    for (let i = 0; i < last; i++) {
      r -= weights[i];
      if (r < 0) return i;
    }
    return last;
  }

  /** Standard normal (Box-Muller; one value per call keeps the stream simple to reason about). */
  normal(): number {
    const u = 1 - this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }

  /** Log-normal with the given median: heavy right tail, never negative. */
  lognormal(median: number, sigma: number): number {
    return median * Math.exp(sigma * this.normal());
  }
}
