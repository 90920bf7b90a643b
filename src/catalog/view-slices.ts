/**
 * A published view cut for posting to a thread that is serving: its large plain arrays and maps
 * (the cold dictionaries, some 23,000 strings for 5,000,000 buildings, and the removals' sets,
 * which grow with every approved removal) go apart in slices, and the view itself, without them,
 * last. The largest tables are shared and go by reference (packed-strings.ts).
 *
 * Why: a message is decoded whole on the receiving thread before its handler runs, and a view
 * with hundreds of thousands of strings takes hundreds of ms to decode, during which a worker answers nothing. Posted
 * one slice at a time, each answered before the next goes (worker-pool.ts), it decodes in steps of
 * under a millisecond between which the worker serves. Typed arrays and shared buffers stay in the
 * view: they are shared or copied whole, not decoded item by item.
 */

/** Entries in one slice. */
export const SLICE_ITEMS = 256;

/** Where a cut-out array or map was: its number and kind. */
interface Hole {
  $slices: number;
  kind: 'array' | 'map';
}

/** One slice of a cut-out array (items) or map (entries). */
export interface ViewSlice {
  hole: number;
  items: unknown[];
}

const isHole = (v: object): v is Hole => '$slices' in v;

/** An object a structured clone copies field by field (a plain object or a class instance), not as a whole. */
function record(v: object): boolean {
  return !(
    ArrayBuffer.isView(v) ||
    v instanceof ArrayBuffer ||
    v instanceof SharedArrayBuffer ||
    v instanceof Map ||
    v instanceof Set ||
    v instanceof Date ||
    v instanceof RegExp ||
    v instanceof Error
  );
}

/** The view with every array or map of more than `size` entries replaced by a hole, and their slices in order. */
export function sliceView<T>(view: T, size = SLICE_ITEMS): { skeleton: T; slices: ViewSlice[] } {
  const slices: ViewSlice[] = [];
  let holes = 0;
  const cut = (items: unknown[], kind: Hole['kind']): Hole => {
    const hole = holes++;
    for (let at = 0; at < items.length; at += size) slices.push({ hole, items: items.slice(at, at + size) });
    return { $slices: hole, kind };
  };
  const walk = (v: unknown): unknown => {
    if (v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) return v.length > size ? cut(v, 'array') : v.map(walk);
    if (v instanceof Map) return v.size > size ? cut([...v], 'map') : v;
    if (!record(v)) return v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = walk(x);
    return out;
  };
  return { skeleton: walk(view) as T, slices };
}

/** The receiving side: slices as they come, then the skeleton made whole again. */
export class ViewAssembly {
  private readonly items = new Map<number, unknown[]>();

  add(slice: ViewSlice): void {
    let items = this.items.get(slice.hole);
    if (!items) this.items.set(slice.hole, (items = []));
    for (let i = 0; i < slice.items.length; i++) items.push(slice.items[i]);
  }

  /** The view whose slices were added; throws when one is missing. Clears what it held. */
  join<T>(skeleton: T): T {
    const walk = (v: unknown): unknown => {
      if (v === null || typeof v !== 'object') return v;
      if (Array.isArray(v)) return v.map(walk);
      if (!record(v)) return v;
      if (isHole(v)) {
        const items = this.items.get(v.$slices);
        if (!items) throw new Error(`a view came without its slices (${v.$slices})`);
        return v.kind === 'map' ? new Map(items as [unknown, unknown][]) : items;
      }
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = walk(x);
      return out;
    };
    try {
      return walk(skeleton) as T;
    } finally {
      this.items.clear();
    }
  }
}
