/**
 * Decompressors (LZW, PackBits, Deflate) hand their output over in pieces of any length; the row
 * decoders (GIF, TIFF) want it a row at a time. Shared by gif.ts and tiff.ts.
 */

/** Where a decompressor writes its output, a piece at a time. */
export type Sink = (piece: Uint8Array) => void;

/**
 * Splits a stream of pieces into rows of `rowBytes`, calling `row` for each, then ignores what comes
 * after `rows` rows. A row lying whole inside a piece is handed over in place; others are gathered in
 * one buffer. Either way `row` must use its data before returning. `done()` says how many rows came.
 */
export function rowSplitter(
  rowBytes: number,
  rows: number,
  row: (data: Uint8Array, index: number) => void,
): { sink: Sink; done: () => number } {
  const buffer = new Uint8Array(rowBytes);
  let filled = 0;
  let index = 0;
  const sink: Sink = (piece) => {
    for (let i = 0; i < piece.length && index < rows;) {
      if (filled === 0 && piece.length - i >= rowBytes) {
        row(piece.subarray(i, i + rowBytes), index++);
        i += rowBytes;
        continue;
      }
      const take = Math.min(rowBytes - filled, piece.length - i);
      buffer.set(piece.subarray(i, i + take), filled);
      filled += take;
      i += take;
      if (filled === rowBytes) {
        row(buffer, index++);
        filled = 0;
      }
    }
  };
  return { sink, done: () => index };
}
