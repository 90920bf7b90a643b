/**
 * A building's address from every record that states one: its own `addr:*` tags, the address
 * points inside its outline, an official list that names it, and, failing those, the address
 * of a business listed inside it.
 *
 * - address: the first address record (own tags, then address points by house number, then
 *   lists); else a business listing's; as the record states it.
 * - entrances: one per distinct address record: each listed address is one entrance.
 * - address_corroboration (spec 2.1): conflicting when another record gives another house
 *   number, else corroborated when one gives the same, else single_source; null when the
 *   address shown has no house number. A disagreement outweighs an agreement: a user filtering
 *   for corroborated addresses wants ones nothing contradicts.
 */
import type { AddressCorroboration, AddressEvidence, EntranceRecord } from '../snapshot/schema.ts';
import type { TaggedAddress } from './osm-tags.ts';

export interface AddressRecord {
  /** Where the record comes from, e.g. `osm:node/123` or `ro-seismic:expertiza-iasi.csv:17`. */
  source: string;
  address: TaggedAddress;
}

export interface SettledAddress {
  address: string | null;
  address_evidence: AddressEvidence;
  address_corroboration: AddressCorroboration | null;
  postal_code: string | null;
  /** City named by the records, for locality; null when none names one. */
  city: string | null;
  entrances: EntranceRecord[];
}

/** "12 A", "12a", "nr. 12a" are one house number. */
function sameHouseNumber(a: string, b: string): boolean {
  return normaliseNumber(a) === normaliseNumber(b);
}

function normaliseNumber(n: string): string {
  return n
    .toLowerCase()
    .replace(/^(?:nr|no|n°)\.?\s*/, '')
    .replace(/\s+/g, '');
}

/** Orders address points of one building by house number, numerically, then as text. */
export function byHouseNumber(a: AddressRecord, b: AddressRecord): number {
  const na = parseInt(a.address.house_number ?? '', 10);
  const nb = parseInt(b.address.house_number ?? '', 10);
  if (na !== nb && !(Number.isNaN(na) && Number.isNaN(nb))) return Number.isNaN(na) ? 1 : Number.isNaN(nb) ? -1 : na - nb;
  const ta = a.address.text;
  const tb = b.address.text;
  return ta < tb ? -1 : ta > tb ? 1 : a.source < b.source ? -1 : a.source > b.source ? 1 : 0;
}

/** Postal code and city a building's own tags state, with or without a street. */
export interface StatedPlace {
  postal_code: string | null;
  city: string | null;
}

/**
 * `records` in order of preference (own tags first); `listings` from businesses inside;
 * `stated`: the building's own postal code and city, used where the address shown states none.
 */
export function settleAddress(
  records: readonly AddressRecord[],
  listings: readonly AddressRecord[],
  stated: StatedPlace = { postal_code: null, city: null },
): SettledAddress {
  const shown = records[0] ?? listings[0] ?? null;
  const entrances: EntranceRecord[] = [];
  const seen = new Set<string>();
  for (const r of records) {
    const key = r.address.text.toLowerCase().replace(/\s+/g, ' ');
    if (seen.has(key)) continue;
    seen.add(key);
    entrances.push({ address: r.address.text, house_number: r.address.house_number, postal_code: r.address.postal_code, source: r.source });
  }
  let corroboration: AddressCorroboration | null = null;
  const number = shown?.address.house_number ?? null;
  if (number !== null) {
    let same = false;
    let other = false;
    for (const r of [...records, ...listings]) {
      if (r === shown || r.address.house_number === null) continue;
      if (sameHouseNumber(r.address.house_number, number)) same = true;
      else other = true;
    }
    corroboration = other ? 'conflicting' : same ? 'corroborated' : 'single_source';
  }
  let city = shown?.address.city ?? stated.city;
  for (const r of [...records, ...listings]) city ??= r.address.city;
  return {
    address: shown?.address.text ?? null,
    address_evidence: records.length > 0 ? 'address_record' : listings.length > 0 ? 'business_listing' : 'none',
    address_corroboration: corroboration,
    postal_code: shown?.address.postal_code ?? stated.postal_code,
    city,
    entrances,
  };
}
