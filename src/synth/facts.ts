/**
 * What is true of the building being generated, before any record reports it: the generator
 * first draws the building itself, then what each source says of it (with gaps, estimates
 * and rounding). One object is reused for every building.
 */
import type { RoofShape } from '../snapshot/schema.ts';
import type { Kind } from './kinds.ts';
import type { Settlement } from './settlements.ts';

export interface Facts {
  kind: Kind;
  settlement: Settlement;
  zone: number;
  /** Representative point, WGS84. */
  lon: number;
  lat: number;
  /** Outline: shape code, bounding box (m, w along the shape's x), rotation (radians), area (m²). */
  shape: number;
  w: number;
  d: number;
  angle: number;
  area: number;
  floors: number;
  /** Height to the ridge (m) and mean height under the roof (m): volume = area x mean height. */
  heightM: number;
  meanHeightM: number;
  roof: RoofShape;
  year: number;
  /** Staircases, each one entrance (blocks); 1 for other buildings. */
  staircases: number;
}

export function blankFacts(kind: Kind, settlement: Settlement): Facts {
  return {
    kind,
    settlement,
    zone: 0,
    lon: 0,
    lat: 0,
    shape: 0,
    w: 0,
    d: 0,
    angle: 0,
    area: 0,
    floors: 1,
    heightM: 0,
    meanHeightM: 0,
    roof: 'flat',
    year: 2000,
    staircases: 1,
  };
}
