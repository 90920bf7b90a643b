/**
 * locality when no record of the building names a city: the name of the nearest settlement
 * node (`place=city|town|village|hamlet`) within a few kilometres, else the empty string.
 */
import Flatbush from 'flatbush';
import { localDistance } from '../geo/wgs84.ts';
import { nearestItem } from './nearest.ts';

const SETTLEMENTS = new Set(['city', 'town', 'village', 'hamlet']);
/** Farther than this, a settlement's name says little about where a building is. */
export const LOCALITY_MAX_M = 5_000;

export function isSettlement(tags: Readonly<Record<string, string>>): boolean {
  return tags.place !== undefined && SETTLEMENTS.has(tags.place) && (tags.name ?? '').trim() !== '';
}

export class PlaceIndex {
  private readonly lon: number[] = [];
  private readonly lat: number[] = [];
  private readonly names: string[] = [];
  private index: Flatbush | null = null;

  add(lon: number, lat: number, name: string): void {
    if (this.index) throw new Error('PlaceIndex.add() after the index was built.');
    this.lon.push(lon);
    this.lat.push(lat);
    this.names.push(name.trim());
  }

  /** Name of the nearest settlement to (lon, lat) within LOCALITY_MAX_M, or ''. */
  nearestName(lon: number, lat: number): string {
    if (this.names.length === 0) return '';
    if (!this.index) {
      this.index = new Flatbush(this.names.length);
      for (let i = 0; i < this.names.length; i++) this.index.add(this.lon[i], this.lat[i], this.lon[i], this.lat[i]);
      this.index.finish();
    }
    const found = nearestItem(this.index, { minX: lon, minY: lat, maxX: lon, maxY: lat }, LOCALITY_MAX_M, (id) =>
      localDistance(lon, lat, this.lon[id], this.lat[id]),
    );
    return found ? this.names[found.id] : '';
  }
}

/** One key per locality whatever its case, accents or spacing: "El Tarter" and "el  Tarter", "Sornàs" and "Sornás". */
export function localityKey(name: string): string {
  return name
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * The names a country's buildings give their locality, counted by spelling, so that each
 * locality is written one way: its most common spelling among the buildings (stated and
 * inferred alike); a tie goes to the spelling first in code-point order, which puts a
 * capitalised one ("El Tarter") before a lowercase one ("el Tarter").
 */
export class LocalitySpellings {
  private readonly counts = new Map<string, Map<string, number>>();
  private chosen: Map<string, string> | null = null;

  add(name: string): void {
    if (this.chosen) throw new Error('LocalitySpellings.add() after a name was asked for.');
    if (name === '') return;
    const key = localityKey(name);
    let spellings = this.counts.get(key);
    if (!spellings) this.counts.set(key, (spellings = new Map()));
    spellings.set(name, (spellings.get(name) ?? 0) + 1);
  }

  /** The spelling `name`'s locality is written with ('' stays ''). */
  name(name: string): string {
    if (name === '') return name;
    if (!this.chosen) {
      this.chosen = new Map();
      for (const [key, spellings] of this.counts) {
        let best = '';
        let bestCount = 0;
        for (const [spelling, count] of spellings) {
          if (count > bestCount || (count === bestCount && spelling < best)) [best, bestCount] = [spelling, count];
        }
        this.chosen.set(key, best);
      }
    }
    return this.chosen.get(localityKey(name)) ?? name;
  }

  /** Localities written more than one way: their spellings merged into one. */
  get merged(): number {
    let n = 0;
    for (const spellings of this.counts.values()) n += spellings.size - 1;
    return n;
  }
}
