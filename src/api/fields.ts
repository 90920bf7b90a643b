/**
 * `fields=`: the top-level fields of the Building object a caller keeps, building_id always
 * among them. A JSON building is cut from its full bytes (the cached ones) by one scan of its
 * top-level members, so a shrunk page still costs a copy per building and no object; a
 * MessagePack building is picked from its object.
 */
import type { BuildingOut } from './building.ts';
import type { ByteWriter } from './byte-writer.ts';

/** Every top-level field of the Building object, in the serializers' order. */
export const BUILDING_KEYS = [
  'building_id',
  'address',
  'nearest_road',
  'address_evidence',
  'address_corroboration',
  'postal_code',
  'locality',
  'country',
  'latitude',
  'longitude',
  'category',
  'category_evidence',
  'building_type',
  'roof_shape',
  'footprint_area_m2',
  'height',
  'volume_m3',
  'volume_basis',
  'floor_area',
  'floors',
  'floors_including_underground',
  'construction_year',
  'completed_by_year',
  'dwellings',
  'existing_solar_panels',
  'solar_presence',
  'registered_solar',
  'solar_potential',
  'registered_business_count',
  'registered_business_employees',
  'registered_business_turnover',
  'flood_zone',
  'flood_zone_mapped',
  'flood_zone_source',
  'seismic_design_acceleration_g',
  'seismic_risk_class',
  'seismic_risk_assessment_year',
  'app_url',
] as const satisfies readonly (keyof BuildingOut)[];

export type BuildingKey = (typeof BUILDING_KEYS)[number];

// A field added to BuildingOut and not listed here fails to compile.
const EVERY_KEY: [Exclude<keyof BuildingOut, BuildingKey>] extends [never] ? true : never = true;
void EVERY_KEY;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;

export class FieldSelection {
  /** The kept fields in the Building object's order, building_id first. */
  readonly keys: readonly BuildingKey[];
  /** Each kept key as the JSON writes it, quotes included. */
  private readonly quoted: readonly Uint8Array[];

  constructor(asked: readonly string[]) {
    const keys = BUILDING_KEYS.filter((k) => k === 'building_id' || asked.includes(k));
    this.keys = keys;
    this.quoted = keys.map((k) => Buffer.from(`"${k}"`, 'latin1'));
  }

  /**
   * Writes the object src[start, end) (a Building's JSON, members in the serializers' order)
   * with only the kept members. Keys hold nothing to escape; values may be strings with escapes
   * or nested objects and arrays, skipped by depth.
   */
  writeJson(src: Uint8Array, start: number, end: number, out: ByteWriter): void {
    out.byte(0x7b);
    const quoted = this.quoted;
    let next = 0;
    let wrote = false;
    let i = start + 1;
    while (i < end && src[i] === QUOTE) {
      const keyStart = i;
      let keyEnd = i + 1;
      while (src[keyEnd] !== QUOTE) keyEnd++;
      keyEnd++;
      // The value runs to the comma or closing brace at depth 0.
      let j = keyEnd + 1;
      let depth = 0;
      let inString = false;
      for (; j < end; j++) {
        const c = src[j];
        if (inString) {
          if (c === BACKSLASH) j++;
          else if (c === QUOTE) inString = false;
        } else if (c === QUOTE) inString = true;
        else if (c === 0x7b || c === 0x5b) depth++;
        else if (c === 0x7d || c === 0x5d) {
          if (depth === 0) break;
          depth--;
        } else if (c === COMMA && depth === 0) break;
      }
      if (next < quoted.length && sameBytes(src, keyStart, keyEnd, quoted[next])) {
        if (wrote) out.byte(COMMA);
        out.bytes(src, keyStart, j);
        wrote = true;
        next++;
      }
      if (src[j] !== COMMA) break;
      i = j + 1;
    }
    out.byte(0x7d);
  }

  /** The kept fields of a Building object, in its order. */
  pick(b: BuildingOut): Partial<BuildingOut> {
    const out: Record<string, unknown> = {};
    for (const k of this.keys) out[k] = b[k];
    return out as Partial<BuildingOut>;
  }
}

function sameBytes(src: Uint8Array, start: number, end: number, key: Uint8Array): boolean {
  if (end - start !== key.length) return false;
  for (let k = 0; k < key.length; k++) if (src[start + k] !== key[k]) return false;
  return true;
}
