/**
 * The whole PngSuite (test/fixtures/pngsuite, with its license): every valid file is recognised,
 * decoded (the integrity check) and resized; the 14 x*.png files are corrupt and keep only their
 * original. Through HTTP at the real sizes (PngSuite images are at most 40 px, so the original is
 * every size), and through the pipeline at 16 and 8 px so that every colour type, bit depth,
 * palette, transparency and interlacing is actually resized.
 */
import { describe, expect, it } from "vitest";
import { processImage } from "../../src/media/image/pipeline";
import { decodePngReduced, pngLayout } from "../../src/media/image/png-stream";
import { withPhoton } from "../../src/media/image/photon/codec";
import { pngSuiteFiles, sizeNames, uploadMedia } from "./support/media";

const files = pngSuiteFiles();
const corrupt = files.filter((f) => f.name.startsWith("x"));
const valid = files.filter((f) => !f.name.startsWith("x"));
/** Their signature is damaged (bit 7 stripped, a letter changed, CR/LF converted): not a PNG by its magic bytes. */
const BROKEN_SIGNATURE = new Set(["xs1n0g01.png", "xs2n0g01.png", "xs4n0g01.png", "xs7n0g01.png", "xcrn0g04.png", "xlfn0g04.png"]);

const ihdrSize = (bytes: Uint8Array) => {
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  return [view.getUint32(16), view.getUint32(20)];
};

describe("PngSuite through POST /Medias", () => {
  it("has the whole suite: 161 valid files and 14 corrupt ones", () => {
    expect(valid.length).toBe(161);
    expect(corrupt.length).toBe(14);
  });

  it.each(valid.map((f) => [f.name, f.bytes] as const))("%s is an image that decodes", async (name, bytes) => {
    const media = await uploadMedia(bytes, { name, mimeType: "image/png" });
    const [width, height] = ihdrSize(bytes);
    expect(media).toMatchObject({ isImage: true, contentType: "image/png", width, height });
    expect(media.recognition).toMatchObject({ integrity: "passed", failedChecks: [], detectedFormat: "png" });
    // At most 40 px: within Medium and Small, so the original serves every size.
    expect(media.sizes.map((s) => [s.name, s.isOriginal])).toEqual([
      ["Original", true],
      ["Medium", true],
      ["Small", true],
    ]);
  });

  it.each(corrupt.map((f) => [f.name, f.bytes] as const))("%s is corrupt and keeps only its original", async (name, bytes) => {
    const media = await uploadMedia(bytes, { name, mimeType: "image/png" });
    expect(sizeNames(media)).toEqual(["Original"]);
    if (BROKEN_SIGNATURE.has(name)) {
      expect(media.isImage).toBe(false);
      expect(media.recognition.failedChecks).toEqual(["magicBytes"]);
    } else {
      expect(media.isImage).toBe(true);
      expect(media.recognition).toMatchObject({ integrity: "failed", failedChecks: ["integrity"] });
      expect(media.recognition.detail).toBeTruthy();
    }
  });
});

describe("PngSuite through the pipeline at 16 and 8 px", () => {
  it.each(valid.map((f) => [f.name, f.bytes] as const))("%s is resized", async (name, bytes) => {
    const outcome = await processImage("png", bytes, undefined, { medium: 16, small: 8 });
    expect(outcome.integrity, outcome.detail ?? "").toBe("passed");
    const [width, height] = ihdrSize(bytes) as [number, number];
    const expected = (limit: number) =>
      Math.max(width, height) <= limit
        ? undefined
        : [
            Math.max(1, Math.round((width * limit) / Math.max(width, height))),
            Math.max(1, Math.round((height * limit) / Math.max(width, height))),
          ];
    for (const [size, limit] of [
      ["Medium", 16],
      ["Small", 8],
    ] as const) {
      const version = outcome.versions.find((v) => v.size === size);
      const dims = expected(limit);
      if (!dims) {
        expect(version, `${name} ${size}`).toBeUndefined();
        continue;
      }
      expect([version?.width, version?.height, version?.contentType]).toEqual([...dims, "image/png"]);
      // The encoded version decodes to the size it claims.
      const decoded = withPhoton((photon) => photon.decode(version!.bytes));
      expect([decoded.width, decoded.height]).toEqual(dims);
    }
  });

  it.each(corrupt.filter((f) => !BROKEN_SIGNATURE.has(f.name)).map((f) => [f.name, f.bytes] as const))(
    "%s fails integrity",
    async (_name, bytes) => {
      const outcome = await processImage("png", bytes, undefined, { medium: 16, small: 8 });
      expect(outcome.integrity).toBe("failed");
      expect(outcome.versions).toEqual([]);
    },
  );
});

describe("PngSuite through the row-by-row decoder", () => {
  const interlaced = valid.filter((f) => pngLayout(f.bytes).interlaced);

  it("reads every file, interlaced (Adam7) ones too", () => {
    expect(valid.length).toBeGreaterThan(140);
    expect(interlaced.length).toBeGreaterThan(25);
  });

  it.each(valid.map((f) => [f.name, f.bytes] as const))("%s decodes to photon's pixels", async (name, bytes) => {
    const ours = await decodePngReduced(bytes, 1);
    const theirs = withPhoton((photon) => photon.decode(bytes));
    expect([ours.width, ours.height]).toEqual([theirs.width, theirs.height]);
    // Exact for 8 bits and below; 16-bit samples may round differently by one.
    const tolerance = bytes[24] === 16 ? 1 : 0;
    let worst = 0;
    for (let i = 0; i < ours.data.length; i += 4) {
      const alpha = theirs.data[i + 3]!;
      worst = Math.max(worst, Math.abs(ours.data[i + 3]! - alpha));
      // A fully transparent pixel's colour is invisible (and averaged away): only visible ones count.
      if (alpha === 0) continue;
      for (let c = 0; c < 3; c++) worst = Math.max(worst, Math.abs(ours.data[i + c]! - theirs.data[i + c]!));
    }
    expect(worst, name).toBeLessThanOrEqual(tolerance);
  });

  it.each(interlaced.map((f) => [f.name, f.bytes] as const))(
    "%s (interlaced) averages boxes like its non-interlaced twin",
    async (name, bytes) => {
      // PngSuite's basi* files are its basn* files interlaced: the same pixels, so the same boxes.
      const twin = files.find((f) => f.name === name.replace(/^basi/, "basn"));
      if (!twin) return;
      for (const k of [2, 3, 5]) {
        const ours = await decodePngReduced(bytes, k);
        const theirs = await decodePngReduced(twin.bytes, k);
        expect([ours.width, ours.height]).toEqual([theirs.width, theirs.height]);
        // Interlaced boxes sum colour premultiplied in 8 bits (c x a / 255, rounded), so colour is
        // compared as it is seen, premultiplied by alpha: within a level, and alpha exactly.
        let worst = 0;
        for (let i = 0; i < ours.data.length; i += 4) {
          worst = Math.max(worst, Math.abs(ours.data[i + 3]! - theirs.data[i + 3]!));
          for (let c = 0; c < 3; c++)
            worst = Math.max(
              worst,
              Math.abs((ours.data[i + c]! * ours.data[i + 3]!) / 255 - (theirs.data[i + c]! * theirs.data[i + 3]!) / 255),
            );
        }
        expect(worst, `${name} at 1/${k}`).toBeLessThanOrEqual(1);
      }
    },
  );

  it("averages boxes, weighting colour by alpha", async () => {
    // basn6a08: 32 x 32 RGBA with varying alpha. A 4x reduction is the alpha-weighted mean of each box.
    const bytes = files.find((f) => f.name === "basn6a08.png")!.bytes;
    const full = await decodePngReduced(bytes, 1);
    const reduced = await decodePngReduced(bytes, 4);
    expect([reduced.width, reduced.height]).toEqual([8, 8]);
    let sumA = 0;
    let sumRA = 0;
    for (let y = 0; y < 4; y++) {
      for (let x = 0; x < 4; x++) {
        const i = (y * 32 + x) * 4;
        sumA += full.data[i + 3]!;
        sumRA += full.data[i]! * full.data[i + 3]!;
      }
    }
    expect(reduced.data[3]).toBe(Math.round(sumA / 16));
    expect(reduced.data[0]).toBe(sumA === 0 ? 0 : Math.round(sumRA / sumA));
  });
});
