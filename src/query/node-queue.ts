/**
 * The best-first search's queue (bestfirst.ts): row tree nodes (snapshot, level, index in
 * level) waiting to be read, in a binary max-heap by the greatest sort key their rows can
 * hold, on typed arrays that grow.
 */
export class NodeQueue {
  private bound = new Float64Array(1024);
  private snap = new Uint16Array(1024);
  private level = new Uint8Array(1024);
  private index = new Uint32Array(1024);
  size = 0;
  /** The node `pop` took. */
  topBound = 0;
  topSnap = 0;
  topLevel = 0;
  topIndex = 0;

  clear(): void {
    this.size = 0;
  }

  snapAt(j: number): number {
    return this.snap[j];
  }

  levelAt(j: number): number {
    return this.level[j];
  }

  indexAt(j: number): number {
    return this.index[j];
  }

  /** The greatest bound waiting (-Infinity when none). */
  peek(): number {
    return this.size > 0 ? this.bound[0] : -Infinity;
  }

  push(b: number, s: number, level: number, index: number): void {
    if (this.size === this.bound.length) this.grow();
    const bound = this.bound;
    let i = this.size++;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (bound[p] >= b) break;
      this.move(p, i);
      i = p;
    }
    this.put(i, b, s, level, index);
  }

  /** Removes the node of greatest bound into top*. */
  pop(): void {
    const bound = this.bound;
    this.topBound = bound[0];
    this.topSnap = this.snap[0];
    this.topLevel = this.level[0];
    this.topIndex = this.index[0];
    const last = --this.size;
    if (last === 0) return;
    const b = bound[last];
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= last) break;
      if (c + 1 < last && bound[c + 1] > bound[c]) c++;
      if (bound[c] <= b) break;
      this.move(c, i);
      i = c;
    }
    this.put(i, b, this.snap[last], this.level[last], this.index[last]);
  }

  private put(i: number, b: number, s: number, level: number, index: number): void {
    this.bound[i] = b;
    this.snap[i] = s;
    this.level[i] = level;
    this.index[i] = index;
  }

  private move(from: number, to: number): void {
    this.bound[to] = this.bound[from];
    this.snap[to] = this.snap[from];
    this.level[to] = this.level[from];
    this.index[to] = this.index[from];
  }

  private grow(): void {
    const n = this.bound.length * 2;
    const bound = new Float64Array(n);
    const snap = new Uint16Array(n);
    const level = new Uint8Array(n);
    const index = new Uint32Array(n);
    bound.set(this.bound);
    snap.set(this.snap);
    level.set(this.level);
    index.set(this.index);
    this.bound = bound;
    this.snap = snap;
    this.level = level;
    this.index = index;
  }
}
