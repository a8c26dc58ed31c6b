/**
 * Baseline TIFF, a strip or tile at a time (src/media/image/tiff.ts). The files were written by
 * libtiff's tiffcp, sharp and ImageMagick (test/fixtures/corpus/generate.mjs) from one lossless
 * picture whose pixels follow a formula, so each decode is checked against the picture itself.
 */
import { describe, expect, it } from "vitest";
import { CorruptImageError } from "../../src/media/image/errors";
import { readHeader } from "../../src/media/image/header";
import { processImage } from "../../src/media/image/pipeline";
import type { Pixels } from "../../src/media/image/resample";
import { decodeTiffReduced } from "../../src/media/image/tiff";
import { sample, sizeNames, uploadMedia } from "./support/media";

const [W, H] = [160, 120];

function expected(x: number, y: number): number[] {
  const corner = x < W / 4 && y < H / 4;
  return [Math.round((x / W) * 255), Math.round((y / H) * 255), corner ? 20 : 128];
}

function worst(image: Pixels, want: (x: number, y: number) => number[], channels = 3): number {
  let error = 0;
  for (let y = 0; y < image.height; y++) {
    for (let x = 0; x < image.width; x++) {
      const w = want(x, y);
      for (let c = 0; c < channels; c++) error = Math.max(error, Math.abs(image.data[(y * image.width + x) * 4 + c]! - w[c]!));
    }
  }
  return error;
}

describe("TIFF decoding", () => {
  it.each([
    "strips-none.tif",
    "strips-lzw.tif",
    "strips-lzw-predictor.tif",
    "strips-deflate.tif",
    "strips-packbits.tif",
    "tiles-lzw.tif",
    "tiles-deflate.tif",
    "planar-lzw.tif",
    "rotated.tif",
  ])("%s: every pixel exactly", async (file) => {
    const image = await decodeTiffReduced(sample(file), 1);
    expect([image.width, image.height]).toEqual([W, H]);
    expect(worst(image, expected)).toBe(0);
    expect(image.data[(H * W - 1) * 4 + 3]).toBe(255);
  });

  it("16-bit grey with the predictor is the 8-bit grey of the same picture, within rounding", async () => {
    const grey8 = await decodeTiffReduced(sample("grey8.tif"), 1);
    const grey16 = await decodeTiffReduced(sample("grey16.tif"), 1);
    expect(worst(grey16, (x, y) => [...grey8.data.subarray((y * W + x) * 4, (y * W + x) * 4 + 3)])).toBeLessThanOrEqual(1);
    // A grey ramp: dark top-left, light bottom-right.
    expect(grey16.data[0]).toBeLessThan(20);
    expect(grey16.data[(H * W - 1) * 4]).toBeGreaterThan(200);
  });

  it("unassociated alpha is kept", async () => {
    const image = await decodeTiffReduced(sample("alpha.tif"), 1);
    expect(worst(image, expected)).toBe(0);
    expect(Math.abs(image.data[3]! - 127.5)).toBeLessThan(1); // sharp's ensureAlpha(0.5)
  });

  it("a colour map, bilevel and CMYK", async () => {
    // 64 colours for a picture of thousands, undithered: each pixel is its nearest map entry.
    expect(worst(await decodeTiffReduced(sample("palette.tif"), 1), expected)).toBeLessThanOrEqual(32);
    expect(worst(await decodeTiffReduced(sample("cmyk.tif"), 1), expected)).toBeLessThanOrEqual(4);
    const bilevel = await decodeTiffReduced(sample("bilevel.tif"), 1);
    const values = new Set<number>();
    for (let i = 0; i < bilevel.data.length; i += 4) values.add(bilevel.data[i]!);
    expect([...values].sort((a, b) => a - b)).toEqual([0, 255]);
  });

  it("averages into boxes as strips and tiles arrive", async () => {
    for (const file of ["strips-lzw-predictor.tif", "tiles-lzw.tif", "planar-lzw.tif"]) {
      const full = await decodeTiffReduced(sample(file), 1);
      const reduced = await decodeTiffReduced(sample(file), 7);
      expect([reduced.width, reduced.height]).toEqual([Math.ceil(W / 7), Math.ceil(H / 7)]);
      const mean = (bx: number, by: number) => {
        const sums = [0, 0, 0];
        let n = 0;
        for (let y = by * 7; y < Math.min(H, by * 7 + 7); y++) {
          for (let x = bx * 7; x < Math.min(W, bx * 7 + 7); x++, n++)
            for (let c = 0; c < 3; c++) sums[c]! += full.data[(y * W + x) * 4 + c]!;
        }
        return sums.map((s) => s / n);
      };
      expect(worst(reduced, mean)).toBeLessThanOrEqual(0.5);
    }
  });

  it.each([
    { case: "truncated", bytes: () => sample("strips-lzw.tif").subarray(0, 30_000) },
    { case: "a strip offset past the end", bytes: () => sample("tiles-deflate.tif").subarray(0, 40_000) },
    { case: "garbage Deflate data", bytes: () => garble(sample("strips-deflate.tif")) },
  ])("$case: CorruptImageError", async ({ bytes }) => {
    await expect(decodeTiffReduced(bytes(), 1)).rejects.toThrow(CorruptImageError);
  });
});

/** The compressed strip overwritten (the directory, at the end for sharp, stays intact). */
function garble(bytes: Uint8Array): Uint8Array {
  const copy = bytes.slice();
  for (let i = 16; i < 400; i++) copy[i] = (i * 37) & 255;
  return copy;
}

describe("TIFF through the pipeline and POST /Medias", () => {
  it("Orientation 6 is shown portrait", async () => {
    expect(readHeader("tiff", sample("rotated.tif"))).toMatchObject({ width: 160, height: 120, orientation: 6 });
    const outcome = await processImage("tiff", sample("rotated.tif"), undefined, { medium: 100, small: 50 });
    expect(outcome).toMatchObject({ integrity: "passed", width: 120, height: 160 });
    expect(outcome.versions.map((v) => [v.size, v.width, v.height, v.contentType])).toEqual([
      ["Medium", 75, 100, "image/png"],
      ["Small", 38, 50, "image/png"],
    ]);
  });

  it("a scan uploaded as TIFF gets its versions; a truncated one keeps its original and says why", async () => {
    const media = await uploadMedia(sample("tiles-lzw.tif"), { name: "scan.tif", mimeType: "image/tiff" });
    expect(media.recognition).toMatchObject({ detectedFormat: "tiff", integrity: "passed" });
    expect(sizeNames(media)).toEqual(["Original", "Medium", "Small"]);
    const broken = await uploadMedia(sample("strips-lzw.tif").subarray(0, 30_000), { name: "scan.tif", mimeType: "image/tiff" });
    expect(broken.recognition).toMatchObject({ detectedFormat: "tiff", integrity: "failed" });
    expect(broken.recognition.detail).toMatch(/TIFF/);
    expect(sizeNames(broken)).toEqual(["Original"]);
  });
});
