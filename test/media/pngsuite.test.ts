/**
 * The whole PngSuite (test/fixtures/pngsuite, with its license): every valid file is recognised,
 * decoded (the integrity check) and resized; the 14 x*.png files are corrupt and keep only their
 * original. Through HTTP at the real sizes (PngSuite images are at most 40 px, so the original is
 * every size), and through the pipeline at 16 and 8 px so that every colour type, bit depth,
 * palette, transparency and interlacing is actually resized.
 */
import { describe, expect, it } from "vitest";
import { processImage } from "../../src/media/image/pipeline";
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
  it.each(valid.map((f) => [f.name, f.bytes] as const))("%s is resized", (name, bytes) => {
    const outcome = processImage("png", bytes, undefined, { medium: 16, small: 8 });
    expect(outcome.integrity, outcome.detail ?? "").toBe("passed");
    const [width, height] = ihdrSize(bytes) as [number, number];
    const expected = (limit: number) =>
      Math.max(width, height) <= limit ? undefined : [Math.max(1, Math.round((width * limit) / Math.max(width, height))), Math.max(1, Math.round((height * limit) / Math.max(width, height)))];
    for (const [size, limit] of [["Medium", 16], ["Small", 8]] as const) {
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

  it.each(corrupt.filter((f) => !BROKEN_SIGNATURE.has(f.name)).map((f) => [f.name, f.bytes] as const))("%s fails integrity", (_name, bytes) => {
    const outcome = processImage("png", bytes, undefined, { medium: 16, small: 8 });
    expect(outcome.integrity).toBe("failed");
    expect(outcome.versions).toEqual([]);
  });
});
