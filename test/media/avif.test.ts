/**
 * AVIF, decoded whole by libavif/dav1d (@jsquash/avif) up to AVIF_MAX_PIXELS. The files come from
 * avifenc and sharp (test/fixtures/corpus/generate.mjs); pixels are checked against the corpus
 * picture's formula (lossy, so within a tolerance).
 */
import { describe, expect, it } from "vitest";
import { decodeAvifReduced } from "../../src/media/image/avif";
import { CorruptImageError, ImageTooLargeError } from "../../src/media/image/errors";
import { AVIF_MAX_PIXELS } from "../../src/media/image/limits";
import { processImage } from "../../src/media/image/pipeline";
import { heicHeader, sample, sizeNames, uploadMedia } from "./support/media";

function expected(x: number, y: number, width: number, height: number): number[] {
  const corner = x < width / 4 && y < height / 4;
  return [Math.round((x / width) * 255), Math.round((y / height) * 255), corner ? 20 : 128];
}

describe("AVIF decoding", () => {
  it.each(["avifenc-420.avif", "avifenc-444-10bit.avif"])("%s: the picture, within a lossy codec's error", async (file) => {
    const pixels = await decodeAvifReduced(sample(file), 320, 240, 1);
    expect([pixels.width, pixels.height]).toEqual([320, 240]);
    let worst = 0;
    for (let y = 4; y < 240; y += 9) {
      for (let x = 6; x < 320; x += 13) {
        if (Math.abs(x - 80) < 8 || Math.abs(y - 60) < 8) continue; // the dark corner's edges ring
        const want = expected(x, y, 320, 240);
        for (let c = 0; c < 3; c++) worst = Math.max(worst, Math.abs(pixels.data[(y * 320 + x) * 4 + c]! - want[c]!));
      }
    }
    expect(worst).toBeLessThan(16);
  });

  it("keeps alpha: transparent outside the rectangle", async () => {
    const pixels = await decodeAvifReduced(sample("avifenc-alpha.avif"), 320, 240, 1);
    expect(pixels.data[(120 * 320 + 160) * 4 + 3]).toBeGreaterThan(250);
    expect(pixels.data[(5 * 320 + 5) * 4 + 3]).toBeLessThan(5);
  });

  it("refuses what would not fit, and corrupt data", async () => {
    await expect(decodeAvifReduced(sample("avifenc-420.avif"), 4032, 3024, 1)).rejects.toThrow(ImageTooLargeError);
    expect(AVIF_MAX_PIXELS).toBeLessThan(4032 * 3024);
    await expect(decodeAvifReduced(heicHeader(64, 48, "avif"), 64, 48, 1)).rejects.toThrow(CorruptImageError);
  });
});

describe("AVIF through the pipeline and POST /Medias", () => {
  it("an AVIF gets its Small version (PNG when transparent, JPEG otherwise)", async () => {
    const opaque = await processImage("avif", sample("avifenc-420.avif"));
    expect(opaque.versions.map((v) => [v.size, v.width, v.height, v.contentType])).toEqual([["Small", 256, 192, "image/jpeg"]]);
    const alpha = await processImage("avif", sample("avifenc-alpha.avif"));
    expect(alpha.versions.map((v) => [v.size, v.width, v.height, v.contentType])).toEqual([["Small", 256, 192, "image/png"]]);
    const media = await uploadMedia(sample("gps.avif"), { name: "IMG.avif", mimeType: "image/avif" });
    expect(media.recognition).toMatchObject({ detectedFormat: "avif", integrity: "passed" });
    expect(sizeNames(media)).toEqual(["Original", "Medium", "Small"]);
  });
});
