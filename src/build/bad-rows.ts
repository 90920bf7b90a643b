/**
 * The builder's account of rows it could not use as they are. A bad row (broken geometry,
 * a value that does not parse, an unknown enum value) is counted under a stable reason with a
 * few examples, and the build goes on; in strict mode the first one stops the build. Notes
 * count what is expected in real data and never stops a build (an address point outside every
 * outline, a seismic-list row no outline is near). Merged rows are duplicates folded into the
 * row they repeat (an outline drawn inside another).
 */

export interface Where {
  file: string;
  /** 1-based line where the row starts. */
  line: number;
}

export interface ReasonCount {
  reason: string;
  count: number;
  /** The first few occurrences as `file:line: detail`. */
  examples: string[];
}

/** Thrown in strict mode at the first bad row. */
export class BadRowError extends Error {
  constructor(
    readonly where: Where,
    readonly reason: string,
    detail: string,
  ) {
    super(`${where.file}:${where.line}: ${reason}: ${detail}`);
    this.name = 'BadRowError';
  }
}

class Tally {
  private readonly byReason = new Map<string, ReasonCount>();
  constructor(private readonly examples: number) {}
  add(reason: string, where: Where, detail: string): void {
    let entry = this.byReason.get(reason);
    if (!entry) {
      entry = { reason, count: 0, examples: [] };
      this.byReason.set(reason, entry);
    }
    entry.count++;
    if (entry.examples.length < this.examples) entry.examples.push(`${where.file}:${where.line}: ${detail}`);
  }
  list(): ReasonCount[] {
    return [...this.byReason.values()].sort((a, b) => b.count - a.count || (a.reason < b.reason ? -1 : 1));
  }
}

export class RowLog {
  private readonly badRows: Tally;
  private readonly noted: Tally;
  private readonly mergedRows: Tally;

  /** `strict`: the first bad row throws a `BadRowError`. `examples` kept per reason (default 3). */
  constructor(
    private readonly strict: boolean,
    examples = 3,
  ) {
    this.badRows = new Tally(examples);
    this.noted = new Tally(examples);
    this.mergedRows = new Tally(examples);
  }

  bad(reason: string, where: Where, detail: string): void {
    if (this.strict) throw new BadRowError(where, reason, detail);
    this.badRows.add(reason, where, detail);
  }

  note(reason: string, where: Where, detail: string): void {
    this.noted.add(reason, where, detail);
  }

  /** A row folded into another (a duplicate outline): counted once, as part of the other. */
  merged(reason: string, where: Where, detail: string): void {
    this.mergedRows.add(reason, where, detail);
  }

  summary(): { bad: ReasonCount[]; notes: ReasonCount[]; merged: ReasonCount[] } {
    return { bad: this.badRows.list(), notes: this.noted.list(), merged: this.mergedRows.list() };
  }
}
