/**
 * Addresses as records state them. A plot has one address on its street (house number from
 * its place along the street; blocks of flats and industrial halls often only by block or
 * hall name, with no house number). The main building carries it; an outbuilding sometimes
 * carries the same address, which the buildings then share. A building no address names gets
 * the street it stands on as `nearest_road`, never as `address`; one whose only address is a
 * business listing gets that, with `address_evidence` business_listing and no entrance.
 */
import type { BuildingRecord, EntranceRecord } from '../snapshot/schema.ts';
import { flatAscii } from './flat.ts';
import { INDUSTRIAL, type PlotGrid } from './layout.ts';
import { streetName } from './names.ts';
import type { Prng } from './prng.ts';
import { CITY, TOWN, VILLAGE, type Settlement } from './settlements.ts';

const STAIRCASES = 'ABCDEFGHIJ';

/** Share of plots with an address record, by settlement kind. */
const ADDRESSED = [0.93, 0.89, 0.8];

export class AddressBook {
  private entranceCounter = 0;
  private blockCounter = 0;
  private settlement = -1;
  /** The current settlement's street names and postal codes, made once each: the writer keeps
   *  a reference per building, so a shared string costs nothing more per building. */
  private streets: string[] = [];
  private postalCodes: string[] = [];

  // The current plot.
  addressed = false;
  street = '';
  /** House number, or null when the address names a block or hall instead. */
  number: string | null = null;
  /** Street and number (or block), without the locality. */
  head = '';
  text = '';
  locality = '';
  postalCode = '';

  /** Sets the current plot's address from its place in the grid. */
  plot(rng: Prng, s: Settlement, grid: PlotGrid, category: string): void {
    if (s.index !== this.settlement) {
      this.settlement = s.index;
      this.blockCounter = 0;
      this.streets = [];
      this.postalCodes = [];
    }
    this.street = this.streets[grid.streetIndex] ??= streetName(s.streetOffset, grid.streetIndex);
    // A village has one postal code, a town a few, a city one per street (up to 600).
    const spread = s.kind === CITY ? grid.streetIndex % 600 : s.kind === TOWN ? grid.streetIndex % 10 : 0;
    this.postalCode = this.postalCodes[spread] ??= `${10 + s.county}${1000 + ((s.postalBase + spread) % 9000)}`;
    this.addressed = rng.chance(grid.zone === INDUSTRIAL ? 0.75 : ADDRESSED[s.kind]);
    const byName = category === 'apartment_block' ? rng.chance(0.35) : grid.zone === INDUSTRIAL && rng.chance(0.3);
    if (byName) {
      this.number = null;
      const label =
        category === 'apartment_block'
          ? `bl. ${STAIRCASES[this.blockCounter % 4]}${1 + (this.blockCounter >> 2)}`
          : `hala ${this.blockCounter + 1}`;
      this.blockCounter++;
      this.head = `${this.street}, ${label}`;
    } else {
      this.number = s.kind === VILLAGE || !rng.chance(0.04) ? String(grid.houseNumber) : `${grid.houseNumber}A`;
      this.head = `${this.street} ${this.number}`;
    }
    this.locality = s.name;
    this.text = `${this.head}, ${s.name}`;
  }

  /**
   * Writes address, entrances and corroboration of one building of the plot. `carries`: the
   * plot's address record names this building. `listing`: a business at it lists the address.
   */
  apply(rng: Prng, r: BuildingRecord, carries: boolean, listing: boolean, staircases: number, sourcePrefix: string): void {
    if (carries && this.addressed) {
      r.address = this.text;
      r.address_evidence = 'address_record';
      r.nearest_road = null;
      r.postal_code = rng.chance(0.96) ? this.postalCode : null;
      const entrances: EntranceRecord[] = [];
      for (let i = 0; i < staircases; i++) {
        entrances.push({
          address: staircases === 1 ? this.text : `${this.head}, sc. ${STAIRCASES[i]}, ${this.locality}`,
          house_number: this.number,
          postal_code: r.postal_code,
          source: flatAscii(`${sourcePrefix}address/${this.entranceCounter++}`),
        });
      }
      r.entrances = entrances;
    } else if (listing && this.number !== null) {
      r.address = this.text;
      r.address_evidence = 'business_listing';
      r.nearest_road = null;
      r.postal_code = rng.chance(0.8) ? this.postalCode : null;
      r.entrances = [];
    } else {
      r.address = null;
      r.address_evidence = 'none';
      r.nearest_road = rng.chance(0.85) ? this.street : null;
      r.postal_code = rng.chance(0.5) ? this.postalCode : null;
      r.entrances = [];
    }
    // Corroboration speaks of a house number: none shown, none given.
    if (r.address === null || this.number === null) {
      r.address_corroboration = null;
    } else {
      const c = rng.next();
      r.address_corroboration =
        r.address_evidence === 'business_listing'
          ? c < 0.15
            ? 'corroborated'
            : c < 0.8
              ? 'single_source'
              : 'conflicting'
          : c < 0.55
            ? 'corroborated'
            : c < 0.93
              ? 'single_source'
              : 'conflicting';
    }
  }
}
