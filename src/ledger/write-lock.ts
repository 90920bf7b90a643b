/**
 * The ledger's write lock across the threads of one server. SQLite lets one connection write at a
 * time; a connection that finds the lock taken waits in SQLite's busy handler, which sleeps in
 * growing steps (1, 2, 5, 10 ms...) while the holder needs well under a millisecond. Threads that
 * share this lock (a word in a SharedArrayBuffer) queue on it instead and are woken the moment it
 * is free, so SQLite never sees them collide. Other processes (the admin CLI) still meet SQLite's
 * own lock and busy timeout.
 *
 * Reentrant within one Ledger: a transaction may call another write.
 */
export class WriteLock {
  readonly buffer: SharedArrayBuffer;
  private readonly word: Int32Array;
  private depth = 0;

  constructor(buffer: SharedArrayBuffer = new SharedArrayBuffer(4)) {
    if (!(buffer instanceof SharedArrayBuffer) || buffer.byteLength !== 4)
      throw new TypeError('A write lock is a SharedArrayBuffer of 4 bytes.');
    this.buffer = buffer;
    this.word = new Int32Array(buffer);
  }

  /** Runs `fn` holding the lock. */
  run<T>(fn: () => T): T {
    if (this.depth === 0) {
      while (Atomics.compareExchange(this.word, 0, 0, 1) !== 0) Atomics.wait(this.word, 0, 1, 50);
    }
    this.depth++;
    try {
      return fn();
    } finally {
      if (--this.depth === 0) {
        Atomics.store(this.word, 0, 0);
        Atomics.notify(this.word, 0, 1);
      }
    }
  }
}
