/**
 * Damaged files against the decoders of issue 11: random bytes overwritten in real files of every
 * format decoded by our own code or a WASM library (WebP lossy, lossless, alpha and animated; TIFF
 * strips, tiles and planar; GIF; RLE8 BMP; HEIC and AVIF grids) and random RLE command streams.
 * Whatever the damage, a decoder either returns a picture of the header's size or throws one of the
 * image errors the pipeline turns into an outcome: never a TypeError, a RangeError or a WASM trap,
 * which would be a 500 (processImage rethrows anything else). Run with 10 times the runs below once
 * (4,000 damaged files a format, 5,000 RLE streams): nothing found.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeAvifReduced } from "../../src/media/image/avif";
import { decodeBmpReduced } from "../../src/media/image/bmp-stream";
import { CorruptImageError, ImageTooLargeError, UnsupportedImageError } from "../../src/media/image/errors";
import type { ImageFormat } from "../../src/media/image/formats";
import { processImage } from "../../src/media/image/pipeline";
import { sample } from "./support/media";

const IMAGE_ERRORS = [CorruptImageError, ImageTooLargeError, UnsupportedImageError];
const isImageError = (error: unknown) => IMAGE_ERRORS.some((kind) => error instanceof kind);

/** `file` with `edits` (position as a fraction of the file, byte) applied. */
function damaged(file: Uint8Array, edits: [number, number][]): Uint8Array {
  const copy = file.slice();
  for (const [at, value] of edits) copy[Math.floor(at * copy.length)] = value;
  return copy;
}

const edits = fc.array(fc.tuple(fc.double({ min: 0, max: 0.9999, noNaN: true }), fc.integer({ min: 0, max: 255 })), {
  minLength: 1,
  maxLength: 12,
});

describe("damaged files give an image error or a picture, never a crash", () => {
  it("random RLE8 and RLE4 command streams", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(4, 8),
        fc.uint8Array({ minLength: 0, maxLength: 200 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 30 }),
        async (bits, commands, width, height) => {
          const colours = bits === 8 ? 200 : 16;
          const offset = 54 + colours * 4;
          const file = new Uint8Array(offset + commands.length);
          const view = new DataView(file.buffer);
          file.set([0x42, 0x4d]);
          view.setUint32(10, offset, true);
          view.setUint32(14, 40, true);
          view.setInt32(18, width, true);
          view.setInt32(22, height, true);
          view.setUint16(28, bits, true);
          view.setUint32(30, bits === 8 ? 1 : 2, true);
          file.set(commands, offset);
          try {
            const pixels = await decodeBmpReduced(file, 1);
            expect([pixels.width, pixels.height]).toEqual([width, height]);
          } catch (error) {
            if (!isImageError(error)) throw error;
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it.each([
    ["lossy-default.webp", "webp"],
    ["lossy-alpha-lossless.webp", "webp"],
    ["lossless.webp", "webp"],
    ["lossless-noisy-alpha.webp", "webp"],
    ["animated-lossy.webp", "webp"],
    ["strips-lzw-predictor.tif", "tiff"],
    ["tiles-deflate.tif", "tiff"],
    ["planar-lzw.tif", "tiff"],
    ["strips-packbits.tif", "tiff"],
    ["imagemagick-rle8.bmp", "bmp"],
    ["interlaced.gif", "gif"],
    ["offset.gif", "gif"],
    ["grid-rotated.heic", "heic"],
  ] as const)("%s through the pipeline", async (name, format: ImageFormat) => {
    const file = sample(name);
    await fc.assert(
      fc.asyncProperty(edits, async (changes) => {
        const outcome = await processImage(format, damaged(file, changes));
        expect(["passed", "failed", "notChecked"]).toContain(outcome.integrity);
      }),
      { numRuns: 40 },
    );
  });

  it.each(["avifenc-grid.avif", "avifenc-grid-alpha.avif"])("%s", async (name) => {
    const file = sample(name);
    await fc.assert(
      fc.asyncProperty(edits, async (changes) => {
        try {
          const pixels = await decodeAvifReduced(damaged(file, changes), 320, 240, 2);
          expect([pixels.width, pixels.height]).toEqual([160, 120]);
        } catch (error) {
          if (!isImageError(error)) throw error;
        }
      }),
      { numRuns: 60 },
    );
  });
});
