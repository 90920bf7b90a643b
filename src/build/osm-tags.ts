/**
 * What OpenStreetMap tags say about a building, in the snapshot's terms. Each parser returns
 * the value, or null with a problem noted when the tag is present but unusable, so that the
 * builder can count bad values and still keep the building.
 */
import type { Category, CategoryEvidence, RoofShape } from '../snapshot/schema.ts';

export type Tags = Readonly<Record<string, string>>;

/**
 * A tag present but not understood: the field stays null and the builder counts it, as a bad
 * row, or as a note when `note` is set (a value the snapshot has no word for, not a broken one).
 */
export interface TagProblem {
  reason: 'unknown_building_value' | 'unknown_roof_shape' | 'unparseable_height' | 'unparseable_levels' | 'unparseable_start_date';
  detail: string;
  note?: true;
}

const CATEGORY_OF: Readonly<Record<string, Category>> = (() => {
  const groups: Record<Category, string[]> = {
    residential_house: [
      'house',
      'detached',
      'semidetached_house',
      'terrace',
      'bungalow',
      'villa',
      'cabin',
      'chalet',
      'farmhouse',
      'static_caravan',
      'houseboat',
      'hut_residential',
    ],
    apartment_block: ['apartments', 'dormitory', 'flats', 'block_of_flats'],
    commercial: [
      'retail',
      'office',
      'commercial',
      'hotel',
      'supermarket',
      'kiosk',
      'shop',
      'shops',
      'bank',
      'restaurant',
      'mall',
      'motel',
      'guest_house',
    ],
    industrial: ['industrial', 'warehouse', 'factory', 'manufacture', 'hangar', 'storage_tank', 'works', 'brewery', 'depot'],
    public: [
      'school',
      'church',
      'chapel',
      'cathedral',
      'mosque',
      'synagogue',
      'temple',
      'shrine',
      'monastery',
      'religious',
      'hospital',
      'public',
      'civic',
      'government',
      'townhall',
      'university',
      'college',
      'kindergarten',
      'train_station',
      'station',
      'transportation',
      'fire_station',
      'police',
      'library',
      'museum',
      'sports_hall',
      'sports_centre',
      'stadium',
      'grandstand',
      'pavilion',
      'castle',
      'military',
      'post_office',
      'prison',
      'clinic',
    ],
    agricultural: [
      'farm',
      'barn',
      'farm_auxiliary',
      'stable',
      'greenhouse',
      'glasshouse',
      'cowshed',
      'sty',
      'silo',
      'slurry_tank',
      'stall',
      'livestock',
    ],
    ancillary: [
      'garage',
      'garages',
      'shed',
      'carport',
      'hut',
      'roof',
      'service',
      'outbuilding',
      'parking',
      'boathouse',
      'toilets',
      'bunker',
      'annex',
      'storage',
      'gatehouse',
      'allotment_house',
      'tower',
      'water_tower',
      'bridge',
      'ruins',
      'container',
      'transformer_tower',
    ],
    unknown: ['construction', 'other', 'abandoned', 'disused'],
  };
  const map: Record<string, Category> = {};
  for (const [category, values] of Object.entries(groups) as [Category, string[]][]) for (const v of values) map[v] = category;
  return map;
})();

/**
 * `building=yes` says nothing of use; what else is on the outline may (a school, a shop).
 * Such a category is inferred, never confirmed.
 */
const INFERRED_FROM: readonly [key: string, values: readonly string[] | null, category: Category][] = [
  [
    'amenity',
    [
      'school',
      'kindergarten',
      'college',
      'university',
      'hospital',
      'clinic',
      'townhall',
      'place_of_worship',
      'fire_station',
      'police',
      'library',
      'community_centre',
      'theatre',
      'post_office',
      'courthouse',
    ],
    'public',
  ],
  ['amenity', ['restaurant', 'cafe', 'bank', 'pub', 'bar', 'fast_food', 'pharmacy', 'fuel', 'cinema'], 'commercial'],
  ['shop', null, 'commercial'],
  ['office', null, 'commercial'],
  ['tourism', ['hotel', 'motel', 'guest_house', 'hostel'], 'commercial'],
  ['historic', ['castle', 'church', 'monastery'], 'public'],
];

const ROOF_SHAPES: Readonly<Record<string, RoofShape>> = {
  gabled: 'gabled',
  saltbox: 'gabled',
  gabled_height_moved: 'gabled',
  hipped: 'hipped',
  side_hipped: 'hipped',
  half_hipped: 'half_hipped',
  flat: 'flat',
  pyramidal: 'pyramidal',
  skillion: 'skillion',
  lean_to: 'skillion',
  round: 'round',
  mansard: 'mansard',
  gambrel: 'gambrel',
  dome: 'dome',
  onion: 'dome',
};

/** A storey, for heights estimated from a level count. */
export const STOREY_M = 3.0;
/** What a roof adds above the top storey when its shape is not known to be flat. */
export const ROOF_ALLOWANCE_M = 1.5;

/** The `building` value of a feature that is a building, or null (`building=no` is none). */
export function buildingValue(tags: Tags): string | null {
  const v = tags.building;
  if (v === undefined || v === 'no') return null;
  return v;
}

/** Lowercase letters, digits and underscores, 1 to 64 chars, as building_type requires. */
export function normaliseType(value: string): string {
  const first = value.split(';')[0];
  const t = first
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 64)
    .replace(/_+$/, '');
  return t === '' || t === 'yes' ? 'unspecified' : t;
}

export interface Classification {
  category: Category;
  category_evidence: CategoryEvidence;
  building_type: string;
}

/** `building=residential`: four floors or more make a block of flats. */
export function residentialCategory(floors: number | null): Category {
  return floors !== null && floors >= 4 ? 'apartment_block' : 'residential_house';
}

/**
 * `building=*` → category. `residential` does not say house or block of flats: four or more
 * floors make it an apartment block, fewer (or unknown) a house, and either is inferred.
 */
export function classify(tags: Tags, floors: number | null, problems: TagProblem[]): Classification {
  const raw = buildingValue(tags) ?? 'yes';
  const type = normaliseType(raw);
  if (type === 'unspecified') {
    for (const [key, values, category] of INFERRED_FROM) {
      const v = tags[key];
      if (v !== undefined && (values === null || values.includes(v)))
        return { category, category_evidence: 'inferred', building_type: type };
    }
    return { category: 'unknown', category_evidence: 'inferred', building_type: type };
  }
  if (type === 'residential') return { category: residentialCategory(floors), category_evidence: 'inferred', building_type: type };
  const category = CATEGORY_OF[type];
  if (category === undefined) {
    problems.push({ reason: 'unknown_building_value', detail: `building=${raw}` });
    return { category: 'unknown', category_evidence: 'inferred', building_type: type };
  }
  return { category, category_evidence: category === 'unknown' ? 'inferred' : 'confirmed', building_type: type };
}

/** `height`: metres ("12", "12 m", "12.5m", "12,5"), or feet ("40'", "40'6\"", "40 ft"). */
export function parseHeight(value: string): number | null {
  const s = value.trim();
  let m = /^(\d+(?:[.,]\d+)?)\s*(?:m|metres?|meters?)?$/i.exec(s);
  let metres: number | null = null;
  if (m) metres = Number(m[1].replace(',', '.'));
  else if ((m = /^(\d+(?:\.\d+)?)\s*(?:ft|feet)$/i.exec(s))) metres = Number(m[1]) * 0.3048;
  else if ((m = /^(\d+)\s*'\s*(?:(\d+(?:\.\d+)?)\s*")?$/.exec(s))) metres = Number(m[1]) * 0.3048 + Number(m[2] ?? 0) * 0.0254;
  return metres !== null && metres > 0 && metres <= 1000 ? metres : null;
}

/** `building:levels` and friends: a count from 0 to 500. A half level (2.5) is a storey. */
export function parseLevels(value: string): number | null {
  const s = value.trim().replace(',', '.');
  if (!/^\d+(?:\.\d+)?$/.test(s)) return null;
  const n = Math.ceil(Number(s));
  return n <= 500 ? n : null;
}

export function roofShape(value: string): RoofShape | null {
  return (
    ROOF_SHAPES[
      value
        .trim()
        .toLowerCase()
        .replace(/[\s-]+/g, '_')
    ] ?? null
  );
}

export interface StartDate {
  construction_year: number | null;
  construction_year_is_estimate: boolean;
  completed_by_year: number | null;
}

const plausibleYear = (y: number): boolean => y >= 100 && y <= 2100;

/**
 * `start_date`: "1923", "1923-05", "1923-05-01" are exact; "~1923", "ca. 1923", "1920s",
 * "1920..1925", "C19", "early C19", "mid C19", "late C19" are estimates (the middle of what
 * they span); "before 1900" says only that the building stood by then.
 */
export function parseStartDate(value: string): StartDate | null {
  const s = value.trim();
  const exact = (y: number): StartDate | null =>
    plausibleYear(y) ? { construction_year: y, construction_year_is_estimate: false, completed_by_year: null } : null;
  const estimate = (y: number): StartDate | null =>
    plausibleYear(y) ? { construction_year: Math.round(y), construction_year_is_estimate: true, completed_by_year: null } : null;
  let m: RegExpExecArray | null;
  if ((m = /^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$/.exec(s))) return exact(Number(m[1]));
  if ((m = /^(?:~|ca\.?|c\.|circa|about)\s*(\d{4})$/i.exec(s))) return estimate(Number(m[1]));
  if ((m = /^(\d{3})0s$/.exec(s))) return estimate(Number(m[1]) * 10 + 5);
  if ((m = /^(\d{4})\s*(?:\.\.|–|-|\/)\s*(\d{4})$/.exec(s))) {
    const a = Number(m[1]);
    const b = Number(m[2]);
    return b >= a ? estimate((a + b) / 2) : null;
  }
  if ((m = /^(?:(early|mid|late)\s+)?C(\d{1,2})$/i.exec(s))) {
    const start = (Number(m[2]) - 1) * 100;
    const offset = { early: 15, mid: 50, late: 85 }[(m[1] ?? 'mid').toLowerCase() as 'early' | 'mid' | 'late'];
    return estimate(start + offset);
  }
  if ((m = /^(?:before|<)\s*(\d{4})$/i.exec(s))) {
    const y = Number(m[1]);
    return plausibleYear(y) ? { construction_year: null, construction_year_is_estimate: false, completed_by_year: y } : null;
  }
  return null;
}

/** The address fields of a tagged object, as the record states them. */
export interface TaggedAddress {
  /** `addr:street` + ` ` + `addr:housenumber`, or `addr:place` in place of the street. */
  text: string;
  /** `addr:street`, else `addr:place`. */
  street: string | null;
  house_number: string | null;
  postal_code: string | null;
  city: string | null;
}

const nonEmpty = (v: string | undefined): string | null => (v === undefined || v.trim() === '' ? null : v.trim());

export function taggedAddress(tags: Tags): TaggedAddress | null {
  const street = nonEmpty(tags['addr:street']) ?? nonEmpty(tags['addr:place']);
  const number = nonEmpty(tags['addr:housenumber']);
  if (street === null && number === null) return null;
  return {
    text: street !== null && number !== null ? `${street} ${number}` : (street ?? number)!,
    street,
    house_number: number,
    postal_code: nonEmpty(tags['addr:postcode']),
    city: nonEmpty(tags['addr:city']),
  };
}

export interface BuildingFacts extends Classification, StartDate {
  /** `addr:postcode` and `addr:city` of the outline, kept whether or not it states a street or number. */
  stated_postal_code: string | null;
  stated_city: string | null;
  floors: number | null;
  floors_including_underground: number | null;
  /** Stated by a `height` tag; null when absent or unusable. */
  stated_height_m: number | null;
  roof_shape: RoofShape | null;
  address: TaggedAddress | null;
}

/** Everything the tags of a building outline state, with the problems found on the way. */
export function buildingFacts(tags: Tags, problems: TagProblem[]): BuildingFacts {
  let floors: number | null = null;
  let underground: number | null = null;
  if (tags['building:levels'] !== undefined) {
    floors = parseLevels(tags['building:levels']);
    if (floors === null) problems.push({ reason: 'unparseable_levels', detail: `building:levels=${tags['building:levels']}` });
  }
  if (tags['building:levels:underground'] !== undefined) {
    underground = parseLevels(tags['building:levels:underground']);
    if (underground === null)
      problems.push({ reason: 'unparseable_levels', detail: `building:levels:underground=${tags['building:levels:underground']}` });
  }
  let stated: number | null = null;
  if (tags.height !== undefined) {
    stated = parseHeight(tags.height);
    if (stated === null) problems.push({ reason: 'unparseable_height', detail: `height=${tags.height}` });
  }
  let roof: RoofShape | null = null;
  if (tags['roof:shape'] !== undefined) {
    roof = roofShape(tags['roof:shape']);
    // OpenStreetMap has more shapes than the spec's ten (quadruple_saltbox, cone...): the snapshot has no word for them.
    if (roof === null) problems.push({ reason: 'unknown_roof_shape', detail: `roof:shape=${tags['roof:shape']}`, note: true });
  }
  let start: StartDate = { construction_year: null, construction_year_is_estimate: false, completed_by_year: null };
  if (tags.start_date !== undefined) {
    const parsed = parseStartDate(tags.start_date);
    if (parsed) start = parsed;
    else problems.push({ reason: 'unparseable_start_date', detail: `start_date=${tags.start_date}` });
  }
  return {
    ...classify(tags, floors, problems),
    ...start,
    floors,
    floors_including_underground: floors !== null && underground !== null ? floors + underground : null,
    stated_height_m: stated,
    roof_shape: roof,
    address: taggedAddress(tags),
    stated_postal_code: nonEmpty(tags['addr:postcode']),
    stated_city: nonEmpty(tags['addr:city']),
  };
}

/** Height in metres from a level count: storeys plus a roof unless the roof is flat. */
export function estimatedHeight(floors: number, roof: RoofShape | null): number {
  return floors * STOREY_M + (roof === 'flat' ? 0 : ROOF_ALLOWANCE_M);
}
