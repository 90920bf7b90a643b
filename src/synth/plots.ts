/**
 * What stands on a plot and where. The zone picks the main building's kind and size; a big
 * building claims a block of cells, a household plot keeps its house near the street and its
 * garage, shed or barn behind, a farm lines up long sheds. Every building is fitted into its
 * own slot of the plot (shrunk if it must be), with a margin, so neighbours never touch.
 */
import { drawSize } from './attributes.ts';
import type { Facts } from './facts.ts';
import { FARM, FARMHOUSE, HOUSE, TOWNHOUSE, ZONE_EXTRAS, ZONE_KINDS, type Kind } from './kinds.ts';
import { INDUSTRIAL, type PlotGrid } from './layout.ts';
import type { Prng } from './prng.ts';
import { VILLAGE } from './settlements.ts';

/** Gap kept between a building and the edge of its slot (m). */
const MARGIN = 1.5;
/** Most buildings on one plot: the main one and up to four more. */
export const MAX_ON_PLOT = 5;
/** Largest block of cells one plot may claim, per side. */
const MAX_SPAN = 5;

export class PlotPlanner {
  /** Buildings of the current plot. */
  count = 0;
  readonly kinds: Kind[] = new Array(MAX_ON_PLOT);
  /** Grid-local centre (m), bounding box (m, w along the outline's x) and rotation relative to the grid. */
  readonly cx = new Float64Array(MAX_ON_PLOT);
  readonly cy = new Float64Array(MAX_ON_PLOT);
  readonly w = new Float64Array(MAX_ON_PLOT);
  readonly d = new Float64Array(MAX_ON_PLOT);
  readonly shape = new Int32Array(MAX_ON_PLOT);
  readonly turn = new Float64Array(MAX_ON_PLOT);

  constructor(private readonly scratch: Facts) {}

  /**
   * Claims the plot at the grid's current cell and lays out at most `remaining` buildings on
   * it. Needs `grid.free >= remaining`; keeps that true for what is left after the plot.
   */
  plan(rng: Prng, grid: PlotGrid, settlementKind: number, remaining: number): void {
    const zone = grid.zone;
    const mix = ZONE_KINDS[zone];
    const kind = mix.values[rng.weighted(mix.weights, mix.total)];
    const f = this.scratch;
    drawSize(rng, kind, f);
    let w = f.w,
      d = f.d;
    // Cells needed lying along the street or across it; take the orientation needing fewer.
    const along = Math.ceil((w + 2 * MARGIN) / grid.cellW) * Math.ceil((d + 2 * MARGIN) / grid.cellH);
    const across = Math.ceil((d + 2 * MARGIN) / grid.cellW) * Math.ceil((w + 2 * MARGIN) / grid.cellH);
    if (across < along) {
      w = f.d;
      d = f.w;
    }
    const spanX = Math.min(MAX_SPAN, Math.ceil((w + 2 * MARGIN) / grid.cellW));
    const spanY = Math.min(MAX_SPAN, Math.ceil((d + 2 * MARGIN) / grid.cellH));
    const big = spanX * spanY > 1 && grid.free - spanX * spanY >= remaining - 1 && grid.claim(spanX, spanY);
    if (!big) grid.claim(1, 1);
    this.count = 0;
    // Village houses stand a little askew; city buildings follow the street.
    const jitter = settlementKind === VILLAGE ? 0.07 : 0.02;

    if (big && kind === FARM && remaining > 1) {
      // A farm: long sheds side by side across the plot.
      const sheds = Math.min(remaining, rng.int(1, 4), MAX_ON_PLOT);
      const strip = (grid.y1 - grid.y0) / sheds;
      for (let i = 0; i < sheds; i++) {
        if (i > 0) drawSize(rng, FARM, f);
        this.place(rng, FARM, f.w, f.d, f.shape, grid.x0, grid.y0 + i * strip, grid.x1, grid.y0 + (i + 1) * strip, 0, jitter);
      }
      return;
    }
    const household = kind === HOUSE || kind === FARMHOUSE || kind === TOWNHOUSE;
    const extrasMix = ZONE_EXTRAS[zone];
    let extras = 0;
    if (!big && (household || zone === INDUSTRIAL)) {
      // Geometric count with the zone's mean: many plots none, some one, a few several.
      const p = extrasMix.mean / (1 + extrasMix.mean);
      while (extras < 3 && extras < remaining - 1 && rng.chance(p)) extras++;
    }
    if (extras === 0) {
      this.place(rng, kind, w, d, f.shape, grid.x0, grid.y0, grid.x1, grid.y1, big ? 0 : grid.front, jitter);
      return;
    }
    // House at the front, outbuildings side by side at the back.
    const depth = grid.y1 - grid.y0;
    const frontDepth = depth * (settlementKind === VILLAGE ? 0.5 : 0.6);
    const fy0 = grid.front > 0 ? grid.y1 - frontDepth : grid.y0;
    const by0 = grid.front > 0 ? grid.y0 : grid.y0 + frontDepth;
    const by1 = by0 + depth - frontDepth;
    this.place(rng, kind, w, d, f.shape, grid.x0, fy0, grid.x1, fy0 + frontDepth, grid.front, jitter);
    const slotW = (grid.x1 - grid.x0) / extras;
    for (let i = 0; i < extras; i++) {
      const extra = extrasMix.kinds.values[rng.weighted(extrasMix.kinds.weights, extrasMix.kinds.total)];
      drawSize(rng, extra, f);
      this.place(rng, extra, f.w, f.d, f.shape, grid.x0 + i * slotW, by0, grid.x0 + (i + 1) * slotW, by1, 0, jitter);
    }
  }

  /**
   * Fits a w x d building into the slot [x0, x1] x [y0, y1]: turned a quarter if that fits
   * better, cut to the slot if nothing fits, a small random tilt when there is room. `front` pushes it
   * towards the street side (+1 top, -1 bottom, 0 anywhere).
   */
  private place(
    rng: Prng,
    kind: Kind,
    w: number,
    d: number,
    shape: number,
    x0: number,
    y0: number,
    x1: number,
    y1: number,
    front: number,
    jitter: number,
  ): void {
    const aw = x1 - x0 - 2 * MARGIN,
      ah = y1 - y0 - 2 * MARGIN;
    let turn = 0;
    let bw = w,
      bh = d;
    if (!(w <= aw && d <= ah)) {
      // Turn it a quarter if that fits, else cut each side to the slot (a shorter slab keeps its depth).
      if ((d <= aw && w <= ah) || Math.min(aw / d, ah / w) > Math.min(aw / w, ah / d)) turn = Math.PI / 2;
      bw = turn ? Math.min(d, aw) : Math.min(w, aw);
      bh = turn ? Math.min(w, ah) : Math.min(d, ah);
      w = turn ? bh : bw;
      d = turn ? bw : bh;
    }
    // Asymmetric outlines face either way.
    if (rng.chance(0.5)) turn += Math.PI;
    let tilt = rng.range(-jitter, jitter);
    const c = Math.abs(Math.cos(tilt)),
      s = Math.abs(Math.sin(tilt));
    const tw = bw * c + bh * s,
      th = bw * s + bh * c;
    if (tw > aw || th > ah) tilt = 0;
    const rw = tilt ? tw : bw,
      rh = tilt ? th : bh;
    const i = this.count++;
    this.kinds[i] = kind;
    this.w[i] = w;
    this.d[i] = d;
    this.shape[i] = shape;
    this.turn[i] = turn + tilt;
    this.cx[i] = x0 + MARGIN + rw / 2 + rng.next() * (aw - rw);
    const setback = rng.next() * Math.min(5, ah - rh);
    this.cy[i] =
      front > 0
        ? y1 - MARGIN - setback - rh / 2
        : front < 0
          ? y0 + MARGIN + setback + rh / 2
          : y0 + MARGIN + rh / 2 + rng.next() * (ah - rh);
  }
}
