/**
 * Where the plots of one settlement lie: a street grid, rotated, whose cells are taken from
 * the centre outwards in order of a noisy distance, so that settlements grow lobed, ragged
 * outlines rather than discs. Rows pair up on either side of a street (odd house numbers on
 * one side, even on the other); a cross street cuts every few plots. A plot takes one cell or,
 * for big buildings, a block of cells; a cell is never taken twice, so outlines that stay
 * inside their plot never overlap.
 */
import { BLOCK_CELLS, CELL_H, CELL_W, CITY, STREET_M, TOWN, type Settlement } from './settlements.ts';
import { hashUnit } from './prng.ts';

/** Zones of a settlement: what its plots hold. */
export const CORE = 0;
export const INNER = 1;
export const SUBURB = 2;
export const INDUSTRIAL = 3;
export const TOWN_CENTRE = 4;
export const TOWN_EDGE = 5;
export const VILLAGE_ZONE = 6;
export const ZONES = 7;

export class PlotGrid {
  readonly cellW: number;
  readonly cellH: number;
  private readonly street: number;
  private readonly side: number;
  private readonly half: number;
  private readonly originX: number;
  private readonly originY: number;
  private readonly order: Float64Array;
  private readonly taken: Uint8Array;
  private readonly indexBits: number;
  private cursor = 0;
  /** Cells neither visited nor claimed: a plot of one cell and one building always fits. */
  free: number;

  // The current cell, set by next().
  col = 0;
  row = 0;
  zone = 0;

  // The claimed plot, set by claim(): grid-local rectangle in metres, and its address cell.
  x0 = 0;
  y0 = 0;
  x1 = 0;
  y1 = 0;
  /** Which way the plot's front faces: +1 up (towards larger y), -1 down. */
  front = 1;
  streetIndex = 0;
  houseNumber = 0;

  /** `cells`: how many cells the grid holds at least (it is square, so usually a few more). */
  constructor(
    private readonly s: Settlement,
    seed: number,
    cells: number,
  ) {
    this.cellW = CELL_W[s.kind];
    this.cellH = CELL_H[s.kind];
    this.street = STREET_M[s.kind];
    this.side = Math.max(7, Math.ceil(Math.sqrt(cells)) | 1);
    this.half = this.side >> 1;
    this.originX = this.half * this.cellW + Math.floor(this.half / BLOCK_CELLS) * this.street;
    this.originY = this.half * this.cellH + Math.floor((this.half + 1) / 2) * this.street;
    const n = this.side * this.side;
    this.free = n;
    this.taken = new Uint8Array(n);
    this.indexBits = Math.ceil(Math.log2(n + 1));
    // Lobes: the distance is stretched by a few random harmonics of the angle.
    const a1 = hashUnit(seed, s.index, 1) * 0.25,
      p1 = hashUnit(seed, s.index, 2) * 6.283;
    const a2 = hashUnit(seed, s.index, 3) * 0.18,
      p2 = hashUnit(seed, s.index, 4) * 6.283;
    const a3 = hashUnit(seed, s.index, 5) * 0.1,
      p3 = hashUnit(seed, s.index, 6) * 6.283;
    const keys = new Float64Array(n);
    const scale = 2 ** this.indexBits;
    for (let i = 0; i < n; i++) {
      const x = this.localX((i % this.side) - this.half) + this.cellW / 2;
      const y = this.localY(Math.floor(i / this.side) - this.half) + this.cellH / 2;
      const angle = Math.atan2(y, x);
      const stretch = 1 + a1 * Math.sin(2 * angle + p1) + a2 * Math.sin(3 * angle + p2) + a3 * Math.sin(5 * angle + p3);
      // Small jitter roughens the edge; a rare large one scatters plots into the fields around.
      const sprawl = hashUnit(seed ^ s.index, i, 8);
      const jitter = hashUnit(seed ^ s.index, i, 7) * 0.6 * this.cellH + sprawl * sprawl * sprawl * sprawl * 0.35 * s.radiusM;
      const d = Math.sqrt(x * x + y * y) / stretch + jitter;
      // Pack the quantised distance and the cell into one double: a plain numeric sort orders them.
      keys[i] = Math.floor(d) * scale + i;
    }
    keys.sort();
    this.order = keys;
  }

  /** Grid-local x (m) of the left edge of column `c` (0 = centre): a cross street every few plots. */
  private localX(c: number): number {
    const k = c + this.half;
    return k * this.cellW + Math.floor(k / BLOCK_CELLS) * this.street - this.originX;
  }

  /** Grid-local y (m) of the bottom edge of row `r` (0 = centre): a street between rows 2k and 2k+1. */
  private localY(r: number): number {
    const k = r + this.half;
    return k * this.cellH + Math.floor((k + 1) / 2) * this.street - this.originY;
  }

  /** Moves to the next free cell; false when none is left. Sets col, row, zone. */
  next(): boolean {
    const mask = 2 ** this.indexBits;
    while (this.cursor < this.order.length) {
      const key = this.order[this.cursor++];
      const i = key % mask;
      if (this.taken[i]) continue;
      this.col = (i % this.side) - this.half;
      this.row = Math.floor(i / this.side) - this.half;
      this.zone = this.zoneOf(Math.floor(key / mask));
      return true;
    }
    return false;
  }

  private zoneOf(distanceM: number): number {
    const s = this.s;
    const rho = distanceM / s.radiusM;
    if (s.kind === CITY || s.kind === TOWN) {
      const x = this.localX(this.col),
        y = this.localY(this.row);
      let angle = Math.atan2(y, x) - s.industryFrom;
      angle -= 2 * Math.PI * Math.floor(angle / (2 * Math.PI));
      if (rho > 0.5 && angle < s.industryWidth) return INDUSTRIAL;
      if (s.kind === TOWN) return rho < 0.3 ? TOWN_CENTRE : TOWN_EDGE;
      return rho < 0.2 ? CORE : rho < 0.55 ? INNER : SUBURB;
    }
    return VILLAGE_ZONE;
  }

  /** Grid-local centre (m) of the current cell. */
  get cellX(): number {
    return this.localX(this.col) + this.cellW / 2;
  }

  get cellY(): number {
    return this.localY(this.row) + this.cellH / 2;
  }

  /** Leaves the current cell empty (a park, a square, a river bed). */
  skip(): void {
    this.taken[(this.row + this.half) * this.side + this.col + this.half] = 1;
    this.free--;
  }

  /**
   * Claims a block of `w` x `h` cells that includes the current one, if all of them are free
   * and inside the grid; sets the plot rectangle and its address. A 1 x 1 plot always fits.
   */
  claim(w: number, h: number): boolean {
    // Try the four placements that keep the current cell in a corner of the block.
    for (let corner = 0; corner < 4; corner++) {
      const c0 = corner & 1 ? this.col - w + 1 : this.col;
      const r0 = corner & 2 ? this.row - h + 1 : this.row;
      if (c0 < -this.half || r0 < -this.half || c0 + w - 1 > this.half || r0 + h - 1 > this.half) continue;
      let fits = true;
      for (let r = r0; r < r0 + h && fits; r++) {
        for (let c = c0; c < c0 + w; c++) {
          if (this.taken[(r + this.half) * this.side + c + this.half]) {
            fits = false;
            break;
          }
        }
      }
      if (!fits) continue;
      for (let r = r0; r < r0 + h; r++) {
        for (let c = c0; c < c0 + w; c++) this.taken[(r + this.half) * this.side + c + this.half] = 1;
      }
      this.free -= w * h;
      this.x0 = this.localX(c0);
      this.x1 = this.localX(c0 + w - 1) + this.cellW;
      this.y0 = this.localY(r0);
      this.y1 = this.localY(r0 + h - 1) + this.cellH;
      // Rows 2k face up to street k, rows 2k+1 face down to it; numbers run along the street.
      const r = r0 + this.half;
      this.front = r % 2 === 0 ? 1 : -1;
      this.streetIndex = r >> 1;
      this.houseNumber = 2 * (c0 + this.half) + (r % 2 === 0 ? 1 : 2);
      return true;
    }
    return false;
  }
}
