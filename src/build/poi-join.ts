/**
 * Points of interest as business listings of the building that contains them: a named node
 * tagged shop, office, craft, or an amenity or tourism value that is a business. Street
 * furniture and places of worship carry names too but trade nothing.
 *
 * OpenStreetMap is not a business register: a listing says a business trades there, not that
 * its registered office is there, so it never becomes a registered business. Its address is
 * the building's `address_evidence: business_listing` when no address record names it.
 */
import type { Tags } from './osm-tags.ts';

const NOT_A_BUSINESS_AMENITY = new Set([
  'parking',
  'parking_space',
  'parking_entrance',
  'bicycle_parking',
  'motorcycle_parking',
  'bench',
  'waste_basket',
  'waste_disposal',
  'recycling',
  'post_box',
  'telephone',
  'shelter',
  'fountain',
  'drinking_water',
  'toilets',
  'place_of_worship',
  'grave_yard',
  'hunting_stand',
  'vending_machine',
  'clock',
  'bbq',
  'water_point',
  'watering_place',
  'bicycle_rental',
  'charging_station',
  'atm',
  'letter_box',
  'public_bookcase',
  'townhall',
  'school',
  'kindergarten',
  'fire_station',
  'police',
  'prison',
  'courthouse',
  'community_centre',
  'social_facility',
  'library',
]);
const BUSINESS_TOURISM = new Set([
  'hotel',
  'motel',
  'guest_house',
  'hostel',
  'apartment',
  'chalet',
  'alpine_hut',
  'wilderness_hut',
  'camp_site',
  'caravan_site',
  'museum',
  'gallery',
  'zoo',
  'theme_park',
  'aquarium',
]);

/** Is this tagged object a business listing? */
export function isBusiness(tags: Tags): boolean {
  if ((tags.name ?? '').trim() === '') return false;
  if (tags.shop !== undefined && tags.shop !== 'no' && tags.shop !== 'vacant') return true;
  if (tags.office !== undefined && tags.office !== 'no') return true;
  if (tags.craft !== undefined && tags.craft !== 'no') return true;
  if (tags.amenity !== undefined && !NOT_A_BUSINESS_AMENITY.has(tags.amenity)) return true;
  return tags.tourism !== undefined && BUSINESS_TOURISM.has(tags.tourism);
}
