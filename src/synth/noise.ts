/**
 * Smooth value noise over the plane: the generator's source of fields that vary gently in
 * space (climate, seismic acceleration, flood-zone edges). Stateless: a value depends only on
 * (seed, channel, x, y), so fields need no stored grids.
 */
import { hashUnit } from './prng.ts';

function smooth(t: number): number {
  return t * t * (3 - 2 * t);
}

/** Value noise in [0, 1) on a unit lattice: bilinear blend of hashed corners, smoothstepped. */
export function valueNoise(seed: number, channel: number, x: number, y: number): number {
  const x0 = Math.floor(x),
    y0 = Math.floor(y);
  const fx = smooth(x - x0),
    fy = smooth(y - y0);
  const key = seed ^ Math.imul(channel, 0x27d4eb2d);
  const v00 = hashUnit(key, x0, y0),
    v10 = hashUnit(key, x0 + 1, y0);
  const v01 = hashUnit(key, x0, y0 + 1),
    v11 = hashUnit(key, x0 + 1, y0 + 1);
  const top = v00 + (v10 - v00) * fx;
  const bottom = v01 + (v11 - v01) * fx;
  return top + (bottom - top) * fy;
}

/** Three octaves of value noise, in [0, 1): broad features with some finer detail. */
export function fractalNoise(seed: number, channel: number, x: number, y: number): number {
  return (
    valueNoise(seed, channel, x, y) * 0.5714 +
    valueNoise(seed, channel + 101, x * 2.03, y * 2.03) * 0.2857 +
    valueNoise(seed, channel + 202, x * 4.1, y * 4.1) * 0.1429
  );
}
