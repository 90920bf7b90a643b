/**
 * A snapshot handed to another thread without copying its store: every column lives in a
 * SharedArrayBuffer, which `postMessage` shares rather than copies, so a worker thread serving
 * the same snapshot adds only what cannot be shared — the small JS tables of strings (building
 * types, business names, dictionaries, places) and its own objects around the shared arrays.
 *
 * `toTransfer` gives a structured-cloneable object; `fromTransfer`, in the receiving thread,
 * rebuilds the Snapshot. Class instances lose their prototype in a structured clone; the data-only
 * ones (row tree, node summaries, footprints, places) are rebuilt around their cloned fields, the Flatbush from its
 * shared buffer, and the cold codec's decoders from its string tables.
 */
import Flatbush from 'flatbush';
import { ColdCodec, type StringTables } from './cold.ts';
import { COLD_COLUMNS } from './columns.ts';
import { Footprints } from './geometry.ts';
import { Places } from './places.ts';
import { RowTree } from './rowtree.ts';
import { NodeSummaries } from './summaries.ts';
import { Snapshot, type SnapshotParts } from './snapshot.ts';

export interface SnapshotTransfer {
  parts: Omit<SnapshotParts, 'index' | 'cold'>;
  /** The Flatbush's data buffer (shared). */
  index: ArrayBuffer | SharedArrayBuffer | null;
  cold: { dictionaries: [string, string[]][]; strings: StringTables };
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

export function toTransfer(s: Snapshot): SnapshotTransfer {
  const { index, cold, ...parts } = s.parts;
  return {
    parts,
    index: index ? index.data : null,
    cold: { dictionaries: [...cold.tables].map(([name, table]) => [name, table.values]), strings: cold.strings.tables },
    serial: s.serial,
  };
}

export function fromTransfer(t: SnapshotTransfer): Snapshot {
  const cold = new ColdCodec(COLD_COLUMNS);
  for (const [name, values] of t.cold.dictionaries) append(cold.tables.get(name)!.values, values);
  append(cold.strings.prefixes, t.cold.strings.prefixes);
  append(cold.strings.suffixes, t.cold.strings.suffixes);
  append(cold.strings.wholes, t.cold.strings.wholes);
  const p = t.parts;
  return new Snapshot({
    ...p,
    tree: revive(RowTree, p.tree),
    summaries: revive(NodeSummaries, p.summaries),
    footprints: revive(Footprints, p.footprints),
    places: revive(Places, p.places),
    index: t.index ? Flatbush.from(t.index as ArrayBuffer) : null,
    cold,
  });
}
