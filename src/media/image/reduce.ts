/**
 * Averaging an image into boxes of `factor` x `factor` pixels as its pixels arrive, so a decoder that
 * produces rows, strips or tiles never holds the whole image: memory is the reduced image plus the
 * sums of the box rows still open. Averages are alpha-weighted, so transparent pixels do not tint
 * their neighbours. Used by the tiled decoders (HEIF grids, TIFF strips and tiles); the resampler
 * (resample.ts) then takes the reduced image to the exact size.
 */
import type { Pixels } from "./resample";

/** Box sizes are capped: a 200x200 box of 8-bit samples still sums exactly in a float64. */
const MAX_FACTOR = 200;

export class BoxReducer {
  readonly factor: number;
  readonly width: number;
  readonly height: number;
  private readonly out: Uint8Array;
  /** Open box rows: colour sums weighted by alpha, the alpha sum, then the pixel count, per box. */
  private readonly open = new Map<number, Float64Array>();

  constructor(
    private readonly sourceWidth: number,
    private readonly sourceHeight: number,
    factor: number,
  ) {
    this.factor = Math.max(1, Math.min(MAX_FACTOR, Math.floor(factor)));
    this.width = Math.ceil(sourceWidth / this.factor);
    this.height = Math.ceil(sourceHeight / this.factor);
    this.out = new Uint8Array(this.width * this.height * 4);
  }

  private sums(boxRow: number): Float64Array {
    let sums = this.open.get(boxRow);
    if (!sums) {
      sums = new Float64Array(this.width * 5);
      this.open.set(boxRow, sums);
    }
    return sums;
  }

  /**
   * Adds `count` pixels of source row `y` starting at column `x`, read from `data` at `start`,
   * `channels` bytes apart (3: RGB, 4: RGBA; channel order R, G, B[, A]). Pixels outside the image
   * (the padding of edge tiles) are ignored.
   */
  addRow(y: number, x: number, data: Uint8Array, start: number, count: number, channels: 3 | 4): void {
    if (y < 0 || y >= this.sourceHeight) return;
    const k = this.factor;
    const n = Math.min(count, this.sourceWidth - x);
    const sums = this.sums((y / k) | 0);
    let box = (x / k) | 0;
    let next = (box + 1) * k;
    let s = box * 5;
    for (let i = 0, at = start; i < n; i++, at += channels) {
      if (x + i === next) {
        box++;
        next += k;
        s += 5;
      }
      const a = channels === 4 ? data[at + 3]! : 255;
      sums[s] = sums[s]! + data[at]! * a;
      sums[s + 1] = sums[s + 1]! + data[at + 1]! * a;
      sums[s + 2] = sums[s + 2]! + data[at + 2]! * a;
      sums[s + 3] = sums[s + 3]! + a;
      sums[s + 4] = sums[s + 4]! + 1;
    }
  }

  /** Every source row before `y` is complete: their box rows are averaged into the result and freed. */
  completeRowsBefore(y: number): void {
    const lastDone = y >= this.sourceHeight ? this.height - 1 : Math.floor(y / this.factor) - 1;
    for (const boxRow of this.open.keys()) if (boxRow <= lastDone) this.close(boxRow);
  }

  /** Every source row from `y` on is complete (a decoder going bottom-up): their box rows are averaged and freed. */
  completeRowsFrom(y: number): void {
    const firstDone = Math.ceil(Math.max(0, y) / this.factor);
    for (const boxRow of this.open.keys()) if (boxRow >= firstDone) this.close(boxRow);
  }

  private close(boxRow: number): void {
    const sums = this.open.get(boxRow)!;
    for (let bx = 0, s = 0, o = boxRow * this.width * 4; bx < this.width; bx++, s += 5, o += 4) {
      const alpha = sums[s + 3]!;
      const n = sums[s + 4]!;
      if (n === 0 || alpha === 0) continue;
      this.out[o] = Math.round(sums[s]! / alpha);
      this.out[o + 1] = Math.round(sums[s + 1]! / alpha);
      this.out[o + 2] = Math.round(sums[s + 2]! / alpha);
      this.out[o + 3] = Math.round(alpha / n);
    }
    this.open.delete(boxRow);
  }

  /** The reduced image (every row completed). */
  result(): Pixels {
    this.completeRowsBefore(this.sourceHeight);
    return { width: this.width, height: this.height, channels: 4, data: this.out };
  }
}
