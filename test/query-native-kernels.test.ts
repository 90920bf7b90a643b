/**
 * The compiled scan loops (native/kernels.cc through src/query/native-kernels.ts) against the
 * predicates they implement, written out row by row here (and the selection against the order
 * it selects in), on random columns with unknown
 * values, sentinels and bounds at and past the columns' ranges; their refusals of calls that
 * would read or write outside an array; and the engine's JavaScript loops, which serve where
 * the addon does not load, against the brute-force reference (query-differential.test.ts run
 * again with EDIFICE_KERNELS=js).
 */
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { NULL_I32 } from '../src/catalog/arrow.ts';
import { NULL_I16 } from '../src/catalog/numeric.ts';
import { ceil32 } from '../src/catalog/summaries.ts';
import { native, nativeUnavailable, type AppendArgs, type NativeKernels } from '../src/query/native-kernels.ts';
import { KeyEmployees, KeyTurnover } from '../src/query/sort-keys.ts';
import { Rng } from './reference/random.ts';

const sel10 = (): Uint32Array => new Uint32Array(10);
type Pass = (r: number) => boolean;
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const N = 5000;

function kernels(): NativeKernels {
  if (native === null) throw new Error(`the compiled kernels did not load: ${nativeUnavailable}`);
  return native;
}

/** A shared column of N rows, as the catalog's are. */
function shared<T extends Float64Array | Int32Array | Int16Array | Uint8Array | Uint16Array | Uint32Array>(
  Ctor: { new (b: SharedArrayBuffer): T; BYTES_PER_ELEMENT: number },
  fill: (i: number) => number,
): T {
  const a = new Ctor(new SharedArrayBuffer(N * Ctor.BYTES_PER_ELEMENT));
  for (let i = 0; i < N; i++) a[i] = fill(i);
  return a;
}

/** The rows of [a, b) that pass, as the engine's loops list them. */
function expected(a: number, b: number, pass: (r: number) => boolean): number[] {
  const out: number[] = [];
  for (let r = a; r < b; r++) if (pass(r)) out.push(r);
  return out;
}

/** A sorted random subset of [0, N): a selection as earlier steps leave it. */
function selection(rng: Rng): Uint32Array {
  const rows: number[] = [];
  const keep = rng.next();
  for (let r = 0; r < N; r++) if (rng.next() < keep) rows.push(r);
  return Uint32Array.from(rows);
}

/** Businesses in row order: offsets[r]..offsets[r + 1] are row r's, rowOf[j] the row of business j; and both keys written out. */
function businesses(rng: Rng) {
  const counts = Array.from({ length: N }, () => (rng.next() < 0.6 ? 0 : 1 + Math.floor(rng.next() * 4)));
  const offsets = new Uint32Array(N + 1);
  for (let r = 0; r < N; r++) offsets[r + 1] = offsets[r] + counts[r];
  const total = offsets[N];
  const rowOf = new Uint32Array(total);
  for (let r = 0; r < N; r++) rowOf.fill(r, offsets[r], offsets[r + 1]);
  const bands = [1, 10, 50, 250, 1000];
  const employeesMin = Int32Array.from({ length: total }, () =>
    rng.next() < 0.3 ? NULL_I32 : bands[Math.floor(rng.next() * bands.length)],
  );
  const currency = Uint16Array.from({ length: total }, () => Math.floor(rng.next() * 3));
  const turnover = Float64Array.from({ length: total }, () => (rng.next() < 0.2 ? NaN : Math.round(rng.next() * 100) * 1000));
  const employeesKey = (r: number): number => {
    let best = -Infinity;
    for (let j = offsets[r]; j < offsets[r + 1]; j++) if (employeesMin[j] !== NULL_I32) best = Math.max(best, employeesMin[j]);
    return best;
  };
  const turnoverKey = (r: number, code: number): number => {
    let best = -Infinity;
    for (let j = offsets[r]; j < offsets[r + 1]; j++) if (currency[j] === code && turnover[j] > best) best = turnover[j];
    return best;
  };
  return { offsets, rowOf, bands, employeesMin, currency, turnover, employeesKey, turnoverKey };
}

describe('compiled scan loops', () => {
  const rng = new Rng(20261129);
  const f64 = shared(Float64Array, () => (rng.next() < 0.1 ? NaN : rng.next() < 0.05 ? 0 : Math.round(rng.next() * 2000) / 10 - 50));
  const i32 = shared(Int32Array, () => (rng.next() < 0.1 ? NULL_I32 : Math.round(rng.next() * 4000) - 1000));
  const i16 = shared(Int16Array, () => (rng.next() < 0.1 ? NULL_I16 : Math.round(rng.next() * 60000) - 30000));
  // Keys of a few values, as heights in decimetres are: most groups of 8 rows hold a tie.
  const few32 = shared(Int32Array, () => (rng.next() < 0.1 ? NULL_I32 : Math.round(rng.next() * 5)));
  const few16 = shared(Int16Array, () => (rng.next() < 0.1 ? NULL_I16 : Math.round(rng.next() * 5)));
  const rank = shared(Uint32Array, (i) => (i * 7919) % N);

  const columns = { f64, i32, i16 } as const;
  const nulls = { f64: NaN, i32: NULL_I32, i16: NULL_I16 } as const;
  const bounds = (): [number, number] => {
    const pick = (): number => {
      const u = rng.next();
      if (u < 0.08) return -Infinity;
      if (u < 0.16) return Infinity;
      if (u < 0.24) return [NULL_I32 + 1, NULL_I16 + 1, 32767, 2 ** 31 - 1, -(2 ** 31), 0][Math.floor(rng.next() * 6)];
      return Math.round(rng.next() * 3000) - 1000;
    };
    const a = pick();
    const b = pick();
    return rng.next() < 0.8 ? [Math.min(a, b), Math.max(a, b)] : [a, b];
  };

  it('range and refine keep exactly the rows within the bounds (unknowns and sentinels fail a lower bound above them)', () => {
    const k = kernels();
    for (let t = 0; t < 400; t++) {
      for (const name of ['f64', 'i32', 'i16'] as const) {
        const col = columns[name];
        const [low, hi] = bounds();
        // The engine's integer steps raise the lower bound above the null sentinel.
        const lo = name === 'f64' ? low : Math.max(low, nulls[name] + 1);
        const a = Math.floor(rng.next() * N);
        const b = a + Math.floor(rng.next() * (N - a + 1));
        const at = Math.floor(rng.next() * 50);
        const sel = new Uint32Array(at + (b - a) + 3);
        const pass = (r: number): boolean => col[r] >= lo && col[r] <= hi;
        const got = k.range(col, lo, hi, a, b, sel, at);
        expect(Array.from(sel.subarray(at, got)), `${name} range [${a}, ${b}) within [${lo}, ${hi}]`).toEqual(expected(a, b, pass));

        const s = selection(rng);
        const want = Array.from(s).filter(pass);
        const n = k.refine(col, lo, hi, s, s.length);
        expect(Array.from(s.subarray(0, n)), `${name} refine within [${lo}, ${hi}]`).toEqual(want);
      }
    }
  });

  it('codes keep the rows whose code the table marks, for 8-, 16- and 32-bit code columns', () => {
    const k = kernels();
    const cols = [
      shared(Uint8Array, () => Math.floor(rng.next() * 12)),
      shared(Uint16Array, () => Math.floor(rng.next() * 900)),
      shared(Uint32Array, () => Math.floor(rng.next() * 70000)),
    ];
    for (let t = 0; t < 200; t++) {
      for (const col of cols) {
        const size = col instanceof Uint8Array ? 256 : col instanceof Uint16Array ? 900 : 70000;
        const table = new Uint8Array(size);
        const share = rng.next();
        for (let c = 0; c < size; c++) table[c] = rng.next() < share ? 1 : 0;
        const a = Math.floor(rng.next() * N);
        const b = a + Math.floor(rng.next() * (N - a + 1));
        const sel = new Uint32Array(b - a + 1);
        const pass = (r: number): boolean => table[col[r]] === 1;
        const got = k.codesRange(col, table, a, b, sel, 1);
        expect(Array.from(sel.subarray(1, got))).toEqual(expected(a, b, pass));
        const s = selection(rng);
        const want = Array.from(s).filter(pass);
        expect(Array.from(s.subarray(0, k.codesRefine(col, table, s, s.length)))).toEqual(want);
      }
    }
  });

  it('flags keep the rows whose masked bits are the ones wanted, the top bit included', () => {
    const k = kernels();
    const flags = shared(Uint32Array, () => Math.floor(rng.next() * 2 ** 32));
    for (let t = 0; t < 300; t++) {
      const mask = (Math.floor(rng.next() * 2 ** 32) & Math.floor(rng.next() * 2 ** 32)) >>> 0;
      const want = (Math.floor(rng.next() * 2 ** 32) & mask) >>> 0;
      const a = Math.floor(rng.next() * N);
      const b = a + Math.floor(rng.next() * (N - a + 1));
      const sel = new Uint32Array(b - a);
      const pass = (r: number): boolean => (flags[r] & mask) >>> 0 === want;
      expect(Array.from(sel.subarray(0, k.flagsRange(flags, mask, want, a, b, sel, 0)))).toEqual(expected(a, b, pass));
      const s = selection(rng);
      const wantRows = Array.from(s).filter(pass);
      expect(Array.from(s.subarray(0, k.flagsRefine(flags, mask, want, s, s.length)))).toEqual(wantRows);
      // A mask of one or two bits, as the boolean filters ask: about half or a quarter of rows pass.
      const bit = (): number => 2 ** Math.floor(rng.next() * 32);
      const few = (bit() | (rng.next() < 0.5 ? bit() : 0)) >>> 0;
      const fewWant = (Math.floor(rng.next() * 2 ** 32) & few) >>> 0;
      const s2 = selection(rng);
      const want2 = Array.from(s2).filter((r) => (flags[r] & few) >>> 0 === fewWant);
      expect(Array.from(s2.subarray(0, k.flagsRefine(flags, few, fewWant, s2, s2.length))), `mask ${few}`).toEqual(want2);
    }
    // Rows past the column fail, in groups of 8 rows tested at once too; the last row is kept like any other.
    const rows = [0, 5, 9, N - 9, N - 3, N - 2, N - 1, N, 2 ** 31, 2 ** 32 - 1, 7, 8, 11, 12, 13, 14, 15, N - 1, 20];
    const sel = Uint32Array.from(rows);
    expect(Array.from(sel.subarray(0, k.flagsRefine(flags, 0, 0, sel, rows.length)))).toEqual(rows.filter((r) => r < N));
  });

  it('the first pass writes nothing past the room a run of rows asks for, whatever share of rows pass', () => {
    const k = kernels();
    // Each flag bit passes a different share of rows, so the 8-row groups of the vector loops
    // (where the CPU has them) meet every pattern of passing rows.
    const shares = [0.02, 0.3, 0.5, 0.8, 0.98, 1];
    const flags = shared(Uint32Array, () => shares.reduce((w, p, bit) => (rng.next() < p ? w | (1 << bit) : w), 0));
    const guard = 0xdeadbeef;
    for (let t = 0; t < 300; t++) {
      const a = Math.floor(rng.next() * N);
      const b = a + Math.floor(rng.next() * Math.min(N - a + 1, rng.next() < 0.3 ? 40 : N));
      const at = Math.floor(rng.next() * 20);
      // The selection is a view with exactly at + (b - a) slots; 16 guard words follow it.
      const whole = new Uint32Array(at + (b - a) + 16).fill(guard);
      const sel = whole.subarray(0, at + (b - a));
      const bit = Math.floor(rng.next() * shares.length);
      const mask = rng.next() < 0.5 ? 1 << bit : (1 << bit) | (1 << ((bit + 1) % shares.length));
      const want = rng.next() < 0.8 ? mask : 0;
      const flagPass = (r: number): boolean => (flags[r] & mask) >>> 0 === want;
      const got = k.flagsRange(flags, mask, want, a, b, sel, at);
      expect(Array.from(sel.subarray(at, got)), `flags [${a}, ${b}) at ${at}`).toEqual(expected(a, b, flagPass));
      expect(Array.from(whole.subarray(sel.length)).every((w) => w === guard)).toBe(true);
      expect(Array.from(sel.subarray(0, at)).every((w) => w === guard)).toBe(true);

      whole.fill(guard);
      const name = (['f64', 'i32', 'i16'] as const)[t % 3];
      const col = columns[name];
      const [low, hi] = bounds();
      const lo = name === 'f64' ? low : Math.max(low, nulls[name] + 1);
      const rangePass = (r: number): boolean => col[r] >= lo && col[r] <= hi;
      const n = k.range(col, lo, hi, a, b, sel, at);
      expect(Array.from(sel.subarray(at, n)), `${name} [${a}, ${b}) within [${lo}, ${hi}]`).toEqual(expected(a, b, rangePass));
      expect(Array.from(whole.subarray(sel.length)).every((w) => w === guard)).toBe(true);
    }
  });

  it('bbox keeps the points inside the box, edges included', () => {
    const k = kernels();
    const lon = shared(Float64Array, () => Math.round(rng.next() * 100) / 10);
    const lat = shared(Float64Array, () => Math.round(rng.next() * 100) / 10);
    for (let t = 0; t < 300; t++) {
      const [x0, x1] = [Math.round(rng.next() * 100) / 10, Math.round(rng.next() * 100) / 10].sort((p, q) => p - q);
      const [y0, y1] = [Math.round(rng.next() * 100) / 10, Math.round(rng.next() * 100) / 10].sort((p, q) => p - q);
      const a = Math.floor(rng.next() * N);
      const b = a + Math.floor(rng.next() * (N - a + 1));
      const sel = new Uint32Array(b - a);
      const pass = (r: number): boolean => lon[r] >= x0 && lon[r] <= x1 && lat[r] >= y0 && lat[r] <= y1;
      expect(Array.from(sel.subarray(0, k.bboxRange(lon, lat, x0, y0, x1, y1, a, b, sel)))).toEqual(expected(a, b, pass));
      const s = selection(rng);
      const want = Array.from(s).filter(pass);
      expect(Array.from(s.subarray(0, k.bboxRefine(lon, lat, x0, y0, x1, y1, s, s.length)))).toEqual(want);
    }
  });

  it('candidates keep the rows whose key can still enter: above the bound, or at it with a low enough rank', () => {
    const k = kernels();
    for (let t = 0; t < 400; t++) {
      const a = Math.floor(rng.next() * N);
      const b = a + Math.floor(rng.next() * (N - a + 1));
      // Exactly the room of the rows, then guard words that no call may touch.
      const whole = new Uint32Array(b - a + 16).fill(0xdeadbeef);
      const sel = whole.subarray(0, b - a);
      const guarded = (): boolean => whole.subarray(b - a).every((w) => w === 0xdeadbeef);
      const rankBound = [0, 1, Math.floor(rng.next() * N), N, 2 ** 32][Math.floor(rng.next() * 5)];
      // Float64: the threshold itself; NaN (unknown) counts as -Infinity.
      const thr =
        rng.next() < 0.1 ? -Infinity : rng.next() < 0.5 ? f64[Math.floor(rng.next() * N)] || 0 : Math.round(rng.next() * 2000) / 10 - 50;
      const key = (r: number): number => (Number.isNaN(f64[r]) ? -Infinity : f64[r]);
      const passF = (r: number): boolean => key(r) > thr || (key(r) === thr && rank[r] < rankBound);
      expect(Array.from(sel.subarray(0, k.candidates(f64, a, b, sel, thr, NaN, rank, rankBound))), `f64 thr ${thr}`).toEqual(
        expected(a, b, passF),
      );
      expect(guarded()).toBe(true);
      // Integers: the least stored value that can enter, and whether a value equal to it is the tie.
      for (const [name, col] of [
        ['i32', i32],
        ['i16', i16],
        ['i32 of few values', few32],
        ['i16 of few values', few16],
      ] as const) {
        const u = rng.next();
        const at = Math.floor(rng.next() * N);
        const min = u < 0.05 ? -Infinity : u < 0.1 ? Infinity : u < 0.5 ? col[at] : Math.round(rng.next() * 70000) - 35000;
        const tie = rng.next() < 0.5 ? min : NaN;
        // Half the time the bound is the rank of a row at the tie itself, which must stay out.
        const rb = rng.next() < 0.5 ? rank[at] : rankBound;
        const passI = (r: number): boolean => col[r] > min || (col[r] === min && (col[r] !== tie || rank[r] < rb));
        expect(
          Array.from(sel.subarray(0, k.candidates(col, a, b, sel, min, tie, rank, rb))),
          `${name} min ${min} tie ${tie} rank bound ${rb}`,
        ).toEqual(expected(a, b, passI));
        expect(guarded()).toBe(true);
      }
    }
  });

  it("candidates with the leaves' maxima list the same rows, and do not read a leaf bounded below the threshold", () => {
    const k = kernels();
    const LEAF = 64;
    const leaves = Math.ceil(N / LEAF);
    // Keys that vary more between leaves than within them, as a sort key does over a row tree
    // in space order; stored in tenths in the integer columns.
    const level = (r: number): number => ((Math.floor(r / LEAF) * 7919) % 100) * 10;
    const g64 = shared(Float64Array, (r) => (rng.next() < 0.1 ? NaN : level(r) + Math.round(rng.next() * 200) / 10));
    const g32 = shared(Int32Array, (r) => (rng.next() < 0.1 ? NULL_I32 : 10 * level(r) + Math.round(rng.next() * 200)));
    const g16 = shared(Int16Array, (r) => (rng.next() < 0.1 ? NULL_I16 : 10 * (level(r) - 500) + Math.round(rng.next() * 200)));
    // Each leaf's greatest key, rounded up to a Float32 as the node summaries hold it (ceil32).
    const maximaOf = (key: (r: number) => number): Float32Array => {
      const m = new Float64Array(leaves).fill(-Infinity);
      for (let r = 0; r < N; r++) m[Math.floor(r / LEAF)] = Math.max(m[Math.floor(r / LEAF)], key(r));
      return Float32Array.from(m, ceil32);
    };
    const maxima = {
      f64: maximaOf((r) => (Number.isNaN(g64[r]) ? -Infinity : g64[r])),
      i32: maximaOf((r) => (g32[r] === NULL_I32 ? -Infinity : g32[r] / 10)),
      i16: maximaOf((r) => (g16[r] === NULL_I16 ? -Infinity : g16[r] / 10)),
    };
    let skipped = 0;
    for (let t = 0; t < 400; t++) {
      const a = Math.floor(rng.next() * N);
      const b = a + Math.floor(rng.next() * (N - a + 1));
      const sel = new Uint32Array(b - a);
      const rankBound = [0, Math.floor(rng.next() * N), 2 ** 32][Math.floor(rng.next() * 3)];
      const thr = rng.next() < 0.1 ? -Infinity : g64[Math.floor(rng.next() * N)] || 0;
      const plain = Array.from(sel.subarray(0, k.candidates(g64, a, b, sel, thr, NaN, rank, rankBound)));
      const byLeaf = k.candidates(g64, a, b, sel, thr, NaN, rank, rankBound, maxima.f64, thr, LEAF);
      expect(Array.from(sel.subarray(0, byLeaf)), `f64 ${thr}`).toEqual(plain);
      for (let j = Math.floor(a / LEAF); j * LEAF < b; j++) if (maxima.f64[j] < thr) skipped++;
      // Integers: the least stored value that can enter is the threshold's code (lowerCode).
      for (const [name, col] of [
        ['i32', g32],
        ['i16', g16],
      ] as const) {
        const real = rng.next() < 0.1 ? -Infinity : Math.round(rng.next() * 10000) / 10 - (name === 'i16' ? 500 : 0);
        const min = Math.ceil(real * 10);
        const tie = min / 10 === real ? min : NaN;
        const all = Array.from(sel.subarray(0, k.candidates(col, a, b, sel, min, tie, rank, rankBound)));
        const n = k.candidates(col, a, b, sel, min, tie, rank, rankBound, maxima[name], real, LEAF);
        expect(Array.from(sel.subarray(0, n)), `${name} ${real}`).toEqual(all);
      }
    }
    expect(skipped).toBeGreaterThan(1000);
    // A leaf whose maximum says nothing in it reaches the threshold is not read: maxima that
    // understate every leaf but the first list only the first leaf's rows.
    const understated = new Float32Array(leaves).fill(-1);
    understated[0] = Infinity;
    const sel = new Uint32Array(N);
    const n = k.candidates(g64, 0, N, sel, 0, NaN, rank, 0, understated, 0, LEAF);
    expect(Array.from(sel.subarray(0, n))).toEqual(expected(0, LEAF, (r) => g64[r] > 0));
    expect(() => k.candidates(g64, 0, N, sel, 0, NaN, rank, 0, new Float32Array(leaves - 1), 0, LEAF)).toThrow(RangeError);
    expect(() => k.candidates(g64, 0, N, sel, 0, NaN, rank, 0, new Float32Array(leaves), 0, 0)).toThrow(RangeError);
    const wrong = new Float64Array(leaves) as unknown as Float32Array;
    expect(() => k.candidates(g64, 0, N, sel, 0, NaN, rank, 0, wrong, 0, LEAF)).toThrow(TypeError);
  });

  it('business candidates keep the rows whose largest band start or turnover can still enter', () => {
    const k = kernels();
    const { offsets, rowOf, bands, employeesMin, currency, turnover, employeesKey, turnoverKey } = businesses(rng);
    const employees = new KeyEmployees(offsets, rowOf, employeesMin);
    const turnoverIn = (code: number): KeyTurnover => new KeyTurnover(offsets, rowOf, currency, turnover, code);
    /** A random rank bound, currency and thresholds (unknown in 30% of trials), and the rows' tests at them. */
    const trial = (): { rankBound: number; code: number; thrE: number; thrT: number; passE: Pass; passT: Pass } => {
      const rankBound = [0, Math.floor(rng.next() * N), 2 ** 32][Math.floor(rng.next() * 3)];
      const code = Math.floor(rng.next() * 3);
      const u = rng.next();
      const thrE = u < 0.3 ? -Infinity : bands[Math.floor(rng.next() * bands.length)];
      const thrT = u < 0.3 ? -Infinity : Math.round(rng.next() * 100) * 1000;
      return {
        rankBound,
        code,
        thrE,
        thrT,
        passE: (r) => employeesKey(r) > thrE || (employeesKey(r) === thrE && rank[r] < rankBound),
        passT: (r) => turnoverKey(r, code) > thrT || (turnoverKey(r, code) === thrT && rank[r] < rankBound),
      };
    };
    for (let t = 0; t < 300; t++) {
      const a = Math.floor(rng.next() * N);
      const b = a + Math.floor(rng.next() * (N - a + 1));
      const sel = new Uint32Array(b - a);
      const { rankBound, code, thrE, thrT, passE, passT } = trial();
      // At an unknown threshold the keys list their rows from the bits of the rows whose key is known.
      const gotE =
        thrE === -Infinity
          ? k.knownCandidates(employees.knownRows(), a, b, sel, rank, rankBound)
          : k.employeesCandidates(offsets, rowOf, employeesMin, a, b, sel, thrE, rank, rankBound);
      expect(Array.from(sel.subarray(0, gotE)), `employees above ${thrE}, rank bound ${rankBound}`).toEqual(expected(a, b, passE));
      const gotT =
        thrT === -Infinity
          ? k.knownCandidates(turnoverIn(code).knownRows(), a, b, sel, rank, rankBound)
          : k.turnoverCandidates(offsets, rowOf, currency, turnover, code, a, b, sel, thrT, rank, rankBound);
      expect(Array.from(sel.subarray(0, gotT)), `turnover ${code} above ${thrT}, rank bound ${rankBound}`).toEqual(expected(a, b, passT));
    }
    // The same test over a selection (a chunk's matches), kept in order, in place.
    let dropped = 0;
    for (let t = 0; t < 300; t++) {
      const rows = selection(rng);
      const { rankBound, code, thrE, thrT, passE, passT } = trial();
      const selE = rows.slice();
      const gotE = k.employeesRefine(offsets, employeesMin, selE, rows.length, thrE, rank, rankBound);
      expect(Array.from(selE.subarray(0, gotE)), `employees above ${thrE}, rank bound ${rankBound}`).toEqual(
        Array.from(rows).filter(passE),
      );
      const selT = rows.slice();
      const gotT = k.turnoverRefine(offsets, currency, turnover, code, selT, rows.length, thrT, rank, rankBound);
      expect(Array.from(selT.subarray(0, gotT)), `turnover ${code} above ${thrT}, rank bound ${rankBound}`).toEqual(
        Array.from(rows).filter(passT),
      );
      dropped += rows.length - gotE;
    }
    expect(dropped).toBeGreaterThan(1000);
    expect(() => k.employeesRefine(offsets, employeesMin, sel10(), 11, 0, rank, 0)).toThrow(/exceeds/);
    expect(() => k.employeesRefine(offsets, turnover as unknown as Int32Array, sel10(), 5, 0, rank, 0)).toThrow(TypeError);
    // Rows of a selection past the offsets or the ranks are dropped rather than read past them.
    const past = Uint32Array.from([1, N + 5, 2]);
    const kept = k.employeesRefine(offsets, employeesMin, past, 3, -Infinity, rank, 2 ** 32);
    expect(Array.from(past.subarray(0, kept))).toEqual([1, 2]);
    const short = Uint32Array.from([0, 1, 2, 3]);
    expect(
      Array.from(short.subarray(0, k.turnoverRefine(offsets, currency, turnover, 0, short, 4, -Infinity, rank.slice(0, 2), 2 ** 32))),
    ).toEqual([0, 1]);
    expect(() => k.employeesCandidates(offsets, rowOf, employeesMin, 0, N + 1, new Uint32Array(N + 1), 0, rank, 0)).toThrow(RangeError);
    expect(() => k.employeesCandidates(offsets, rowOf.subarray(0, 10), employeesMin, 0, N, new Uint32Array(N), 0, rank, 0)).toThrow(
      RangeError,
    );
    expect(() => k.employeesCandidates(offsets, rowOf, employeesMin, 0, 100, new Uint32Array(99), 0, rank, 0)).toThrow(/no room/);
    expect(() =>
      k.turnoverCandidates(offsets, rowOf, currency, employeesMin as unknown as Float64Array, 0, 0, 10, sel10(), 0, rank, 0),
    ).toThrow(TypeError);
    expect(() => k.employeesCandidates(offsets, rowOf, employeesMin, 0, 10, sel10(), -Infinity, rank, 0)).toThrow(/knownCandidates/);
    expect(() => k.turnoverCandidates(offsets, rowOf, currency, turnover, 0, 0, 10, sel10(), -Infinity, rank, 0)).toThrow(
      /knownCandidates/,
    );
    // Each currency's known rows are its own, and built once.
    expect(turnoverIn(1).knownRows()).toBe(turnoverIn(1).knownRows());
    expect(turnoverIn(2).knownRows()).not.toEqual(turnoverIn(1).knownRows());
    // Only the 8 currencies used last keep theirs: the first of nine is built again, the same bits.
    const first = turnoverIn(1).knownRows();
    for (let code = 2; code <= 9; code++) turnoverIn(code).knownRows();
    const again = turnoverIn(1).knownRows();
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });

  it('known candidates keep the rows whose bit is set or whose rank is below the bound', () => {
    const k = kernels();
    for (let t = 0; t < 300; t++) {
      // Bits set in a fifth of the rows, or in all or none of them.
      const density = [0, 0.2, 1][Math.floor(rng.next() * 3)];
      const known = new Uint8Array((N + 7) >>> 3);
      for (let r = 0; r < N; r++) if (rng.next() < density) known[r >>> 3] |= 1 << (r & 7);
      const rankBound = [0, Math.floor(rng.next() * N), 2 ** 32][Math.floor(rng.next() * 3)];
      const a = Math.floor(rng.next() * N);
      const b = a + Math.floor(rng.next() * (N - a + 1));
      const sel = new Uint32Array(b - a);
      const got = k.knownCandidates(known, a, b, sel, rank, rankBound);
      const pass: Pass = (r) => ((known[r >>> 3] >> (r & 7)) & 1) === 1 || rank[r] < rankBound;
      expect(Array.from(sel.subarray(0, got)), `density ${density}, rank bound ${rankBound}, rows [${a}, ${b})`).toEqual(
        expected(a, b, pass),
      );
    }
    expect(() => k.knownCandidates(new Uint8Array(10), 0, 81, new Uint32Array(81), rank, 0)).toThrow(RangeError);
    expect(() => k.knownCandidates(new Uint8Array(N), 0, N + 1, new Uint32Array(N + 1), rank, 0)).toThrow(RangeError);
    expect(() => k.knownCandidates(new Uint8Array(N), 0, 100, new Uint32Array(99), rank, 0)).toThrow(/no room/);
    expect(() => k.knownCandidates(new Uint16Array(N) as unknown as Uint8Array, 0, 10, sel10(), rank, 0)).toThrow(TypeError);
  });

  it('select puts the row of place t at slot t, better rows before it and worse after, moving each row whole, and a page before it in order', () => {
    const k = kernels();
    for (let t = 0; t < 300; t++) {
      const size = 1 + Math.floor(rng.next() * 3000);
      // Few distinct keys, so that ties are decided by rank; ranks distinct, as a snapshot's are.
      // Negative, fractional, huge and tiny keys and both zeros (equal keys) test the keys' bits.
      const distinct = 1 + Math.floor(rng.next() * 50);
      const odd = [-0, 0, -1.5, -1e300, 1e300, 5e-324, -5e-324, 0.1, Infinity];
      const key = Float64Array.from({ length: size }, () => {
        const u = rng.next();
        if (u < 0.05) return -Infinity;
        if (u < 0.15) return odd[Math.floor(rng.next() * odd.length)];
        return Math.floor(rng.next() * distinct) - distinct / 2;
      });
      const ranks = Array.from({ length: size }, (_, i) => i);
      for (let i = size - 1; i > 0; i--) {
        const j = Math.floor(rng.next() * (i + 1));
        [ranks[i], ranks[j]] = [ranks[j], ranks[i]];
      }
      const rank = Uint32Array.from(ranks);
      const row = Uint32Array.from(rank, (r) => r * 3 + 1);
      const lo = Math.floor(rng.next() * size);
      const hi = lo + Math.floor(rng.next() * (size - lo));
      const place = lo + Math.floor(rng.next() * (hi - lo + 1));
      // A third of the calls also order a page [first, place]; a third of those drop the slots after it.
      const first = rng.next() < 1 / 3 ? place - Math.floor(rng.next() * Math.min(120, place - lo + 1)) : place;
      const drop = first < place && rng.next() < 1 / 3;
      const before = Array.from({ length: size }, (_, i) => `${key[i]}/${rank[i]}/${row[i]}`);
      // The places as a sort of the slots would give them (key descending, then rank), independently of select.
      const ranked = before
        .slice(lo, hi + 1)
        .map((s, i) => ({ s, k: key[lo + i], r: rank[lo + i] }))
        .sort((a, b) => (a.k !== b.k ? b.k - a.k : a.r - b.r))
        .map((x) => x.s);
      k.select(key, rank, row, lo, hi, place, first, drop);
      const after = (i: number, j: number): boolean => key[i] < key[j] || (key[i] === key[j] && rank[i] > rank[j]);
      for (let i = lo; i < place; i++) expect(after(i, place), `slot ${i} ranks after slot ${place}`).toBe(false);
      const now = Array.from({ length: size }, (_, i) => `${key[i]}/${rank[i]}/${row[i]}`);
      // Slots [first, place] hold the rows of those places, each with its own key, rank and row.
      expect(now.slice(first, place + 1)).toEqual(ranked.slice(first - lo, place - lo + 1));
      // Slots outside [lo, hi] untouched; inside, the same rows (those up to the place, when the rest is dropped).
      expect(now.slice(0, lo)).toEqual(before.slice(0, lo));
      expect(now.slice(hi + 1)).toEqual(before.slice(hi + 1));
      if (drop) {
        expect(now.slice(lo, place + 1).sort()).toEqual(ranked.slice(0, place - lo + 1).sort());
        continue;
      }
      for (let i = place + 1; i <= hi; i++) expect(after(place, i), `slot ${i} ranks before slot ${place}`).toBe(false);
      expect(now.slice(lo, hi + 1).sort()).toEqual(before.slice(lo, hi + 1).sort());
    }
    const key = new Float64Array(10);
    const u32 = new Uint32Array(10);
    expect(() => k.select(key, u32, u32, 0, 10, 5)).toThrow(RangeError);
    expect(() => k.select(key, u32, u32, 4, 8, 2)).toThrow(RangeError);
    expect(() => k.select(key, u32, new Uint32Array(5), 0, 9, 2)).toThrow(RangeError);
    expect(() => k.select(key, u32, key as unknown as Uint32Array, 0, 9, 2)).toThrow(TypeError);
    expect(() => k.select(key, u32, u32, 2, 9, 5, 6)).toThrow(RangeError);
    expect(() => k.select(key, u32, u32, 2, 9, 5, 1)).toThrow(RangeError);
  });

  it("append fills a deep page's buffer with the rows that reach its floor and rank before its cut, counting those before its top, until it holds the limit", () => {
    const k = kernels();
    // Integer columns over a scale, Float64 keys rounded so that keys tie with the cut, and the
    // business keys (rows without a business unknown).
    const biz = businesses(rng);
    type Append = (...buffer: AppendArgs) => number;
    const keyed: { name: string; key: (r: number) => number; append: Append }[] = [
      { name: 'f64', key: (r) => (Number.isNaN(f64[r]) ? -Infinity : f64[r]), append: (...b) => k.append(f64, 1, ...b) },
      { name: 'i32', key: (r) => (i32[r] === NULL_I32 ? -Infinity : i32[r] / 10), append: (...b) => k.append(i32, 10, ...b) },
      { name: 'i16', key: (r) => (i16[r] === NULL_I16 ? -Infinity : i16[r] / 100), append: (...b) => k.append(i16, 100, ...b) },
      { name: 'employees', key: biz.employeesKey, append: (...b) => k.appendEmployees(biz.offsets, biz.employeesMin, ...b) },
      {
        name: 'turnover',
        key: (r) => biz.turnoverKey(r, 1),
        append: (...b) => k.appendTurnover(biz.offsets, biz.currency, biz.turnover, 1, ...b),
      },
    ];
    let filled = 0;
    let tiesKept = 0;
    let counted = 0;
    for (let t = 0; t < 1000; t++) {
      const { name, key, append } = keyed[t % keyed.length];
      const sel = selection(rng);
      const n = sel.length;
      const from = Math.floor(rng.next() * (n + 1));
      const cap = 4 + Math.floor(rng.next() * 400);
      const keys = new Float64Array(cap + 4).fill(7.5);
      const rows = new Uint32Array(cap + 4).fill(7);
      const ranks = new Uint32Array(cap + 4).fill(7);
      const snaps = new Uint16Array(cap + 4).fill(7);
      const start = Math.floor(rng.next() * cap);
      const limit = start + 1 + Math.floor(rng.next() * (cap - start));
      const someRow = (): number => sel[Math.floor(rng.next() * n)] ?? 0;
      const floor = rng.next() < 0.5 ? -Infinity : key(someRow());
      const cutRow = someRow();
      const cutKey = rng.next() < 0.2 ? null : key(cutRow);
      const cutRank = rng.next() < 0.1 ? 0 : rank[cutRow];
      // A top above the cut, or none.
      const topRow = someRow();
      const topKey = rng.next() < 0.3 ? null : Math.max(key(topRow), cutKey ?? -Infinity);
      const topRank = rank[topRow];
      let above = 0;

      // The reference: TopK's append, one row at a time.
      const want: [number, number, number][] = [];
      let i = from;
      for (; i < n && start + want.length < limit; i++) {
        const r = sel[i];
        const kr = key(r);
        if (kr < floor) continue;
        if (cutKey !== null && (kr < cutKey || (kr === cutKey && rank[r] >= cutRank))) continue;
        if (topKey !== null && (kr > topKey || (kr === topKey && rank[r] < topRank))) {
          above++;
          continue;
        }
        if (cutKey !== null && kr === cutKey) tiesKept++;
        want.push([kr, r, rank[r]]);
      }
      if (start + want.length === limit) filled++;
      if (above > 0) counted++;
      const size = Uint32Array.of(start, 5);
      const got = append(sel, from, n, rank, 3, keys, rows, ranks, snaps, size, limit, floor, cutKey, cutRank, topKey, topRank);
      expect(got, `${name}: stops after the same row (${t})`).toBe(i);
      expect(size[0]).toBe(start + want.length);
      expect(size[1], `${name}: rows counted before the top (${t})`).toBe(5 + (topKey === null ? 0 : above));
      const held = Array.from({ length: want.length }, (_, j) => [keys[start + j], rows[start + j], ranks[start + j]]);
      expect(held).toEqual(want);
      expect(Array.from(snaps.subarray(start, size[0])).every((x) => x === 3)).toBe(true);
      // Slots before the start and past the limit are untouched; past the rows held, only the
      // first may hold a row counted before the top (each row is written before it is judged).
      const past = size[0] + (topKey !== null && size[0] < limit ? 1 : 0);
      for (const j of [...Array(start).keys(), ...Array.from({ length: cap + 4 - past }, (_, x) => past + x)])
        expect([keys[j], rows[j], ranks[j], snaps[j]]).toEqual([7.5, 7, 7, 7]);
    }
    // The trials stop at the limit and keep ties that rank before the cut.
    expect(filled).toBeGreaterThan(50);
    expect(tiesKept).toBeGreaterThan(10);
    expect(counted).toBeGreaterThan(50);

    // Three rows offered (n past them, or a size or limit past the buffer of 4, is refused).
    const sel = Uint32Array.of(1, 2, 3);
    const buffer = (n: number, size: number, limit: number): AppendArgs => {
      const [keys, rows, ranks, snaps] = [new Float64Array(4), new Uint32Array(4), new Uint32Array(4), new Uint16Array(4)];
      return [sel, 0, n, rank, 0, keys, rows, ranks, snaps, Uint32Array.of(size), limit, -Infinity, null, 0, null, 0];
    };
    expect(() => k.append(f64, 1, ...buffer(4, 0, 4))).toThrow(RangeError);
    expect(() => k.append(f64, 1, ...buffer(3, 0, 5))).toThrow(RangeError);
    expect(() => k.append(f64, 1, ...buffer(3, 5, 4))).toThrow(RangeError);
    // A top needs size[1] to count into.
    const topless = buffer(3, 0, 4);
    topless[14] = 0.5;
    expect(() => k.append(f64, 1, ...topless)).toThrow(RangeError);
    expect(() => k.append(new Float32Array(4) as unknown as Float64Array, 1, ...buffer(3, 0, 4))).toThrow(TypeError);
    expect(() => k.appendEmployees(new Uint32Array(4), new Uint32Array(4) as unknown as Int32Array, ...buffer(3, 0, 4))).toThrow(TypeError);
    expect(() => k.appendTurnover(new Uint32Array(4), new Uint16Array(4), new Float64Array(4), 0, ...buffer(4, 0, 4))).toThrow(RangeError);
    // Rows past the column or the ranks, or past the businesses' offsets, are skipped, not read.
    const past = buffer(3, 0, 4);
    past[0] = Uint32Array.of(1, 12, 2);
    k.append(f64.subarray(0, 10), 1, ...past);
    expect(Array.from(past[6].subarray(0, past[9][0]))).toEqual([1, 2]);
    const offsets = Uint32Array.of(0, 1, 1, 2);
    const withBiz = buffer(4, 0, 4);
    withBiz[0] = Uint32Array.of(0, 3, 2, 9);
    k.appendEmployees(offsets, Int32Array.of(5, 7), ...withBiz);
    expect(Array.from(withBiz[6].subarray(0, withBiz[9][0]))).toEqual([0, 2]);
    expect(Array.from(withBiz[5].subarray(0, withBiz[9][0]))).toEqual([5, 7]);
  });

  it('refuses a call that would read or write outside its arrays, or that passes the wrong arrays', () => {
    const k = kernels();
    const sel = new Uint32Array(10);
    expect(() => k.range(f64, 0, 1, 0, N + 1, new Uint32Array(N + 1), 0)).toThrow(RangeError);
    expect(() => k.range(f64, 0, 1, 0, 11, sel, 0)).toThrow(/no room/);
    expect(() => k.range(f64, 0, 1, 5, 10, sel, 6)).toThrow(/no room/);
    expect(() => k.range(f64, 0, 1, 10, 5, sel, 0)).toThrow(RangeError);
    expect(() => k.refine(f64, 0, 1, sel, 11)).toThrow(/exceeds/);
    expect(() => k.range(new Float32Array(10) as unknown as Float64Array, 0, 1, 0, 5, sel, 0)).toThrow(TypeError);
    expect(() => k.range(f64, 0, 1, -1, 5, sel, 0)).toThrow(TypeError);
    expect(() => k.codesRange(new Uint8Array(10), new Uint16Array(256) as unknown as Uint8Array, 0, 5, sel, 0)).toThrow(TypeError);
    expect(() => k.flagsRange(new Int32Array(10) as unknown as Uint32Array, 1, 1, 0, 5, sel, 0)).toThrow(TypeError);
    expect(() => k.candidates(f64, 0, 5, sel, 0, NaN, new Uint32Array(3), 0)).toThrow(RangeError);
    // Rows of a selection past the column fail rather than read past it, alone or in a group of 8
    // rows tested at once; the column's last row is kept like any other.
    const s = Uint32Array.from([1, 2, N + 5, 3]);
    expect(Array.from(s.subarray(0, k.refine(i32, -Infinity, Infinity, s, 4)))).toEqual([1, 2, 3]);
    for (const name of ['f64', 'i32', 'i16'] as const) {
      const col = columns[name];
      const rows = [0, 5, 9, N - 9, N - 3, N - 2, N - 1, N, 2 ** 31, 2 ** 32 - 1, 7, 8, 11, 12, 13, 14, 15, N - 1, 20];
      const lo = name === 'f64' ? -Infinity : nulls[name] + 1;
      const want = rows.filter((r) => r < N && col[r] >= lo);
      const sel = Uint32Array.from(rows);
      expect(Array.from(sel.subarray(0, k.refine(col, lo, Infinity, sel, rows.length))), name).toEqual(want);
    }
  });
});

describe('the JavaScript loops, where the addon does not load', () => {
  // Asynchronous: a worker blocked in spawnSync past vitest's 60 s answers its own messages too late.
  const run = promisify(execFile);
  const env = { ...process.env, EDIFICE_KERNELS: 'js' };

  it('answer the reference differential tests with EDIFICE_KERNELS=js', async () => {
    const probe = await run(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        "const m = await import('./src/query/native-kernels.ts'); console.log(String(m.native === null), m.nativeUnavailable)",
      ],
      { cwd: ROOT, env, encoding: 'utf8' },
    );
    expect(probe.stdout.trim()).toBe('true EDIFICE_KERNELS=js');
    const vitest = [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', 'test/query-differential.test.ts'];
    const options = {
      cwd: ROOT,
      env: { ...env, DIFF_RUNS_PER_SORT: '120', DIFF_RUNS_BORDER: '80', DIFF_RUNS_SYNTHETIC: '80' },
      encoding: 'utf8' as const,
      timeout: 300_000,
      maxBuffer: 64 * 1024 * 1024,
    };
    // A failing run rejects with its output and exit code, which the assertion below shows.
    const done = await run(process.execPath, vitest, options).then(
      (r) => ({ ...r, code: 0 as number | string | null | undefined }),
      (e: { stdout?: string; stderr?: string; code?: number | string | null }) => ({
        stdout: e.stdout ?? '',
        stderr: e.stderr ?? '',
        code: e.code,
      }),
    );
    // eslint-disable-next-line no-control-regex
    const out = `${done.stdout}\n${done.stderr}`.replace(/\x1b\[[0-9;]*m/g, '');
    expect(done.code, out.slice(-3000)).toBe(0);
    expect(out).toMatch(/Tests\s+\d+ passed/);
    expect(out).not.toMatch(/skipped|failed/);
  }, 320_000);
});
