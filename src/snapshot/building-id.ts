/** building_id: the UUIDv5 of a source record id, stable across snapshots. */
import { createHash } from 'node:crypto';

/** Namespace of Edifice building ids (UUIDv5). Fixed forever: changing it changes every id. */
export const BUILDING_ID_NAMESPACE = '6f1c2a8e-3d4b-5e6f-9a0b-1c2d3e4f5a6b';

function uuidBytes(uuid: string): Buffer {
  const hex = uuid.replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/i.test(hex)) throw new TypeError(`Expected a UUID, got "${uuid}".`);
  return Buffer.from(hex, 'hex');
}

/** RFC 9562 UUIDv5 (SHA-1, name-based) of `name` in `namespace`. */
export function uuidv5(name: string, namespace = BUILDING_ID_NAMESPACE): string {
  const hash = createHash('sha1').update(uuidBytes(namespace)).update(name, 'utf8').digest();
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const h = hash.subarray(0, 16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** building_id of a source record, e.g. buildingId('osm:way/12345'). Stable across snapshots. */
export function buildingId(sourceId: string): string {
  return uuidv5(sourceId);
}
