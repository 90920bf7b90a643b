/**
 * locality when no record of the building names a city: the name of the nearest settlement
 * node (`place=city|town|village|hamlet`) within a few kilometres, else the empty string.
 */
import Flatbush from 'flatbush';
import { localDistance } from './geodesy.ts';
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
    const found = nearestItem(this.index, { minX: lon, minY: lat, maxX: lon, maxY: lat }, LOCALITY_MAX_M,
      (id) => localDistance(lon, lat, this.lon[id], this.lat[id]));
    return found ? this.names[found.id] : '';
  }
}
