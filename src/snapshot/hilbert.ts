/**
 * Hilbert curve index of a point on a 2^16 x 2^16 grid (the algorithm flatbush uses,
 * from "Fast Hilbert curve generation" by rawrunprotected). Rows sorted by it are near in
 * memory when near on the ground.
 */
export function hilbert(x: number, y: number): number {
  let a = x ^ y;
  let b = 0xffff ^ a;
  let c = 0xffff ^ (x | y);
  let d = x & (y ^ 0xffff);

  let A = a | (b >> 1);
  let B = (a >> 1) ^ a;
  let C = (c >> 1) ^ (b & (d >> 1)) ^ c;
  let D = (a & (c >> 1)) ^ (d >> 1) ^ d;

  a = A;
  b = B;
  c = C;
  d = D;
  A = (a & (a >> 2)) ^ (b & (b >> 2));
  B = (a & (b >> 2)) ^ (b & ((a ^ b) >> 2));
  C ^= (a & (c >> 2)) ^ (b & (d >> 2));
  D ^= (b & (c >> 2)) ^ ((a ^ b) & (d >> 2));

  a = A;
  b = B;
  c = C;
  d = D;
  A = (a & (a >> 4)) ^ (b & (b >> 4));
  B = (a & (b >> 4)) ^ (b & ((a ^ b) >> 4));
  C ^= (a & (c >> 4)) ^ (b & (d >> 4));
  D ^= (b & (c >> 4)) ^ ((a ^ b) & (d >> 4));

  a = A;
  b = B;
  c = C;
  d = D;
  C ^= (a & (c >> 8)) ^ (b & (d >> 8));
  D ^= (b & (c >> 8)) ^ ((a ^ b) & (d >> 8));

  a = C ^ (C >> 1);
  b = D ^ (D >> 1);

  let i0 = x ^ y;
  let i1 = b | (0xffff ^ (i0 | a));

  i0 = (i0 | (i0 << 8)) & 0x00ff00ff;
  i0 = (i0 | (i0 << 4)) & 0x0f0f0f0f;
  i0 = (i0 | (i0 << 2)) & 0x33333333;
  i0 = (i0 | (i0 << 1)) & 0x55555555;

  i1 = (i1 | (i1 << 8)) & 0x00ff00ff;
  i1 = (i1 | (i1 << 4)) & 0x0f0f0f0f;
  i1 = (i1 | (i1 << 2)) & 0x33333333;
  i1 = (i1 | (i1 << 1)) & 0x55555555;

  return ((i1 << 1) | i0) >>> 0;
}

/**
 * Row order by Hilbert value of (lon, lat) over their extent; ties keep input order, so the
 * same input gives the same order. Sorting packed doubles (hilbert * 2^21 + index) uses the
 * engine's native numeric sort instead of a comparator call per pair.
 */
export function hilbertOrder(lon: Float64Array, lat: Float64Array): Uint32Array {
  const n = lon.length;
  if (n > 2 ** 21 * 2 ** 11) throw new RangeError(`Too many rows to order: ${n}.`);
  let minX = Infinity,
    minY = Infinity,
    maxX = -Infinity,
    maxY = -Infinity;
  for (let i = 0; i < n; i++) {
    if (lon[i] < minX) minX = lon[i];
    if (lon[i] > maxX) maxX = lon[i];
    if (lat[i] < minY) minY = lat[i];
    if (lat[i] > maxY) maxY = lat[i];
  }
  const sx = maxX > minX ? 0xffff / (maxX - minX) : 0;
  const sy = maxY > minY ? 0xffff / (maxY - minY) : 0;
  // 32 hilbert bits + index bits must fit in 53: use the top (53 - indexBits) bits of hilbert.
  const indexBits = Math.max(1, Math.ceil(Math.log2(n + 1)));
  const shift = Math.max(0, 32 - (53 - indexBits));
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const h = hilbert(Math.floor((lon[i] - minX) * sx), Math.floor((lat[i] - minY) * sy));
    keys[i] = Math.floor(h / 2 ** shift) * 2 ** indexBits + i;
  }
  keys.sort();
  const order = new Uint32Array(n);
  const mask = 2 ** indexBits;
  for (let i = 0; i < n; i++) order[i] = keys[i] % mask;
  return order;
}
