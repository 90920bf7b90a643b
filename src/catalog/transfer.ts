/**
 * A snapshot handed to another thread without copying its store: every column lives in a
 * SharedArrayBuffer, which `postMessage` shares rather than copies, and so do the large string
 * tables (cold templates, business names, places: packed-strings.ts), so a worker thread serving
 * the same snapshot adds only the small JS tables of strings (building types, dictionaries) and
 * its own objects around the shared arrays.
 *
 * `toTransfer` gives a structured-cloneable object; `fromTransfer`, in the receiving thread,
 * rebuilds the Snapshot. Class instances lose their prototype in a structured clone; the data-only
 * ones (row tree, node summaries, footprints) are rebuilt around their cloned fields, the packed
 * tables and places around their shared arrays, the Flatbush from its shared buffer, and the cold
 * codec's decoders from its tables.
 */
import Flatbush from 'flatbush';
import { ColdCodec, stringTablesFrom, type StringTables } from './cold.ts';
import { COLD_COLUMNS } from './columns.ts';
import { Footprints } from './geometry.ts';
import { PackedStrings, type PackedStringsParts } from './packed-strings.ts';
import { Places } from './places.ts';
import { RowTree } from './rowtree.ts';
import { NodeSummaries } from './summaries.ts';
import { Snapshot, type SnapshotParts } from './snapshot.ts';

export interface SnapshotTransfer {
  parts: Omit<SnapshotParts, 'index' | 'cold'>;
  /** The Flatbush's data buffer (shared). */
  index: ArrayBuffer | SharedArrayBuffer | null;
  /** The cold blob (shared) and its codec's tables, or the file its rows are read from until it is encoded. */
  cold:
    | { codec: ColdCodecTransfer; blob: Uint8Array; offsets: Uint32Array | Float64Array }
    | { file: SharedArrayBuffer; schemaVersion: number };
  /** The sender's serial of this snapshot: the same transfer twice is the same snapshot. */
  serial: number;
}

/** Appends in a loop: a spread of a large table would overflow the call stack. */
function append(target: string[], source: readonly string[]): void {
  for (let i = 0; i < source.length; i++) target.push(source[i]);
}

/** A data-only class instance around fields cloned from one: built without running its constructor. */
function revive<T extends object>(cls: { prototype: T }, fields: object): T {
  return Object.assign(Object.create(cls.prototype) as T, fields);
}

/** A cold codec's tables, structured-cloneable: its dictionaries' strings and its packed string tables. */
export interface ColdCodecTransfer {
  dictionaries: [string, string[]][];
  strings: Record<keyof StringTables, PackedStringsParts>;
}

export function coldCodecToTransfer(cold: ColdCodec): ColdCodecTransfer {
  return { dictionaries: [...cold.tables].map(([name, table]) => [name, table.values]), strings: cold.strings };
}

export function coldCodecFromTransfer(t: ColdCodecTransfer): ColdCodec {
  const cold = new ColdCodec(COLD_COLUMNS, stringTablesFrom(t.strings));
  for (const [name, values] of t.dictionaries) append(cold.tables.get(name)!.values, values);
  return cold;
}

export function toTransfer(s: Snapshot): SnapshotTransfer {
  const { index, cold, ...parts } = s.parts;
  return {
    parts,
    index: index ? index.data : null,
    cold: 'file' in cold ? cold : { codec: coldCodecToTransfer(cold.codec), blob: cold.blob, offsets: cold.offsets },
    serial: s.serial,
  };
}

export function fromTransfer(t: SnapshotTransfer): Snapshot {
  const cold = 'file' in t.cold ? t.cold : { codec: coldCodecFromTransfer(t.cold.codec), blob: t.cold.blob, offsets: t.cold.offsets };
  const p = t.parts;
  // Packed tables arrive as their shared arrays alone (packed-strings.ts).
  const business = p.business as unknown as Omit<typeof p.business, 'names' | 'namesLower' | 'stringTables'> & {
    names: PackedStringsParts;
    namesLower: PackedStringsParts;
    stringTables: Record<keyof StringTables, PackedStringsParts>;
  };
  return new Snapshot({
    ...p,
    business: {
      ...business,
      names: new PackedStrings(business.names),
      namesLower: new PackedStrings(business.namesLower),
      stringTables: stringTablesFrom(business.stringTables),
    },
    tree: revive(RowTree, p.tree),
    summaries: revive(NodeSummaries, p.summaries),
    footprints: revive(Footprints, p.footprints),
    places: new Places(p.places),
    index: t.index ? Flatbush.from(t.index as ArrayBuffer) : null,
    cold,
  });
}
