/** Selection in a typed array: the k-th greatest value without sorting (Hoare's selection, linear on average). */

/** The k-th greatest of a[0..n) (1 <= k <= n), reordering a: after it, a[0..k-1) hold values at least it, a[k..n) at most. */
export function kthLargest(a: Float64Array, n: number, k: number): number {
  let lo = 0;
  let hi = n - 1;
  const target = k - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >>> 1];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] > pivot) i++;
      while (a[j] < pivot) j--;
      if (i <= j) {
        const t = a[i];
        a[i] = a[j];
        a[j] = t;
        i++;
        j--;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else return a[target];
  }
  return a[target];
}
