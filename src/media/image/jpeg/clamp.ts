/** A sample from a float IDCT result: rounded and limited to 0..255. */
export function clamp(v: number): number {
  return v <= 0 ? 0 : v >= 255 ? 255 : (v + 0.5) | 0;
}

/** Fills an n x n block with one value (plain stores: cheaper than fill() calls for a few bytes). */
export function flat(n: number, value: number, plane: Uint8Array, offset: number, stride: number): void {
  for (let y = 0; y < n; y++) {
    const row = offset + y * stride;
    for (let x = 0; x < n; x++) plane[row + x] = value;
  }
}
