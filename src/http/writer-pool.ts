/**
 * The writers a serving thread assembles page bodies in, reused from request to request: a
 * page is sent from where it was written, so answering it allocates no buffer. A body has to
 * wait for its charge to commit (another thread), so several are in flight at once; one taken
 * and never given back (a request that failed in between) is left to the garbage collector.
 */
import { ByteWriter } from '../api/index.ts';

/** Writers kept for reuse; more in flight at once are made, then dropped when given back. */
const KEEP = 64;
/** A writer grown past this (a page of very large buildings) is dropped rather than kept. */
const KEEP_BYTES = 1024 * 1024;

export class WriterPool {
  private readonly free: ByteWriter[] = [];

  take(): ByteWriter {
    const w = this.free.pop() ?? new ByteWriter();
    w.reset();
    return w;
  }

  /** Gives back a writer whose view nothing will read again. */
  give(w: ByteWriter): void {
    if (this.free.length < KEEP && w.capacity <= KEEP_BYTES && !this.free.includes(w)) this.free.push(w);
  }
}
