/**
 * What every engine of the bench implements, so that one runner times them all and one
 * comparer holds their answers against each other. Adding an engine (e.g. Edifice with the
 * planner forced to a plain scan) is one more `Engine` in the list `query.bench.ts` builds.
 */
import type { BuildingsQuery, PointQuery } from '../src/query/types.ts';

export type MixQuery = { cls: string; kind: 'buildings'; q: BuildingsQuery } | { cls: string; kind: 'point'; q: PointQuery };

/** An answer in comparable form: ids in page order; total and capped for GET /buildings. */
export interface Answer {
  ids: string[];
  total?: number;
  capped?: boolean;
}

export interface Engine<R = unknown> {
  readonly name: string;
  /** true: `run` returns a Promise (awaited inside the timed span). */
  readonly async: boolean;
  /** Answers one query. This call, and only it, is timed. */
  run(m: MixQuery): R | Promise<R>;
  /** Turns what `run` returned into ids (outside the timed span). */
  answer(raw: R): Answer;
  close?(): void | Promise<void>;
}
