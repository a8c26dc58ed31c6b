/**
 * HEIC, the iPhone camera's format: single pictures and the tiled grids iPhones write, decoded a
 * tile at a time (src/media/image/heif.ts). The files come from Debian's heif-enc
 * (test/fixtures/corpus/generate.mjs); their pixels follow a formula, so every check is against
 * what the picture is, not against another decoder.
 */
import { describe, expect, it } from "vitest";
import { decodeHeifReduced } from "../../src/media/image/heif/decode";
import { readHeader } from "../../src/media/image/header";
import { heifFile } from "../../src/media/image/segments";
import { decodeJpeg } from "../../src/media/image/jpeg/decoder";
import { processImage } from "../../src/media/image/pipeline";
import type { Pixels } from "../../src/media/image/resample";
import { fetchData, heicHeader, sample, sizeNames, uploadMedia } from "./support/media";

/** The corpus picture (test/fixtures/corpus/generate.mjs): red by x, green by y, a dark top-left quarter. */
function expected(x: number, y: number, width: number, height: number): number[] {
  const corner = x < width / 4 && y < height / 4;
  return [Math.round((x / width) * 255), Math.round((y / height) * 255), corner ? 20 : 128];
}

/** The largest difference between `image` (RGBA) and the formula, sampled away from the corner's edges (lossy codecs ring there). */
function worstError(image: Pixels, at: (x: number, y: number) => number[]): number {
  let worst = 0;
  for (let y = 3; y < image.height; y += 7) {
    for (let x = 5; x < image.width; x += 11) {
      const want = at(x, y);
      for (let c = 0; c < 3; c++) worst = Math.max(worst, Math.abs(image.data[(y * image.width + x) * 4 + c]! - want[c]!));
    }
  }
  return worst;
}

const decodeJpegVersion = async (bytes: Uint8Array) => decodeJpeg(bytes, { blockSize: 8, maxCoefficientBytes: 1 << 24 });

const nearCornerEdge = (x: number, y: number, w: number, h: number) => Math.abs(x - w / 4) < 8 || Math.abs(y - h / 4) < 8;

describe("HEIC decoding", () => {
  it("decodes a single coded picture", async () => {
    const decoded = await decodeHeifReduced(sample("single.heic"), () => 1);
    expect([decoded.width, decoded.height, decoded.pixels.width, decoded.pixels.height]).toEqual([640, 480, 640, 480]);
    expect(
      worstError(decoded.pixels, (x, y) =>
        nearCornerEdge(x, y, 640, 480)
          ? [...decoded.pixels.data.subarray((y * 640 + x) * 4, (y * 640 + x) * 4 + 3)]
          : expected(x, y, 640, 480),
      ),
    ).toBeLessThan(12);
  });

  it("puts a grid's tiles in place and crops the edge tiles to the picture", async () => {
    const decoded = await decodeHeifReduced(sample("grid.heic"), () => 1);
    expect([decoded.pixels.width, decoded.pixels.height]).toEqual([600, 400]);
    // Every tile, the cropped right column and bottom row included, shows its part of the picture.
    expect(
      worstError(decoded.pixels, (x, y) =>
        nearCornerEdge(x, y, 600, 400) || x % 256 < 4 || y % 256 < 4
          ? [...decoded.pixels.data.subarray((y * 600 + x) * 4, (y * 600 + x) * 4 + 3)]
          : expected(x, y, 600, 400),
      ),
    ).toBeLessThan(12);
    expect(decoded.pixels.data[(399 * 600 + 599) * 4 + 3]).toBe(255);
  });

  it("a single picture larger than its header says is refused before it is decoded, kept and said why", async () => {
    // single-12mp.heic is one coded picture of 4000 x 3000; its ispe is made to say 1000 x 750.
    const honest = sample("single-12mp.heic");
    expect((await processImage("heic", honest)).detail).toMatch(/one coded picture of 4000x3000/);
    const lying = honest.slice();
    const file = heifFile(lying);
    const ispe = file.items.get(file.primary!)!.properties.find((p) => p.type === "ispe")!.body;
    new DataView(ispe.buffer, ispe.byteOffset).setUint32(4, 1000);
    new DataView(ispe.buffer, ispe.byteOffset).setUint32(8, 750);
    expect(readHeader("heic", lying)).toMatchObject({ width: 1000, height: 750 });
    // libheif checks the coded size against ispe itself (the memory ceiling, HEIF_MAX_WASM_BYTES, stays
    // behind it, as it does for AVIF, where libavif does not check first: avif.test.ts).
    await expect(decodeHeifReduced(lying, () => 1)).rejects.toThrow(/Security limit exceeded: Image size 4000x3000/);
    expect(await processImage("heic", lying)).toMatchObject({ integrity: "failed", versions: [] });
    expect((await processImage("heic", sample("single.heic"))).integrity).toBe("passed");
  });

  it("turns irot and imir, in the order the picture lists them, into the EXIF orientation doing the same", () => {
    const orientation = (...steps: ({ irot: number } | { imir: number })[]) =>
      readHeader("heic", heicHeader(64, 48, "heic", steps)).orientation;
    expect([0, 1, 2, 3].map((irot) => orientation({ irot }))).toEqual([1, 8, 3, 6]);
    expect([orientation({ imir: 0 }), orientation({ imir: 1 })]).toEqual([2, 4]);
    // A quarter turn anticlockwise then a mirror: the two diagonal flips (EXIF 7 and 5).
    expect([orientation({ irot: 1 }, { imir: 0 }), orientation({ irot: 1 }, { imir: 1 })]).toEqual([7, 5]);
    expect([orientation({ irot: 3 }, { imir: 0 }), orientation({ irot: 3 }, { imir: 1 })]).toEqual([5, 7]);
    // A half turn and a mirror is the other mirror.
    expect(orientation({ irot: 2 }, { imir: 0 })).toBe(4);
    // The order matters: mirroring first, then turning, is the other diagonal.
    expect(orientation({ imir: 0 }, { irot: 1 })).toBe(5);
  });

  it("reads irot as the orientation: a portrait photo is shown upright", async () => {
    expect(readHeader("heic", sample("grid-rotated.heic"))).toMatchObject({ width: 600, height: 400, orientation: 8 });
    expect(readHeader("heic", sample("grid.heic"))).toMatchObject({ width: 600, height: 400, orientation: 1 });
    const small = (await processImage("heic", sample("grid-rotated.heic"))).versions[0]!;
    expect([small.width, small.height]).toEqual([171, 256]);
    // A quarter turn anticlockwise puts the dark top-left corner bottom-left.
    const { data, info } = { data: (await decodeJpegVersion(small.bytes)).data, info: small };
    expect(data[((info.height - 8) * info.width + 8) * 3 + 2]).toBeLessThan(50);
    expect(data[(8 * info.width + 8) * 3 + 2]).toBeGreaterThan(100);
  });

  it("averages into boxes as the tiles arrive (the reduced picture is the full one's box means)", async () => {
    const full = (await decodeHeifReduced(sample("grid.heic"), () => 1)).pixels;
    const reduced = (
      await decodeHeifReduced(sample("grid.heic"), (w, h) => {
        expect([w, h]).toEqual([600, 400]);
        return 7;
      })
    ).pixels;
    expect([reduced.width, reduced.height]).toEqual([Math.ceil(600 / 7), Math.ceil(400 / 7)]);
    let worst = 0;
    for (let by = 0; by < reduced.height; by++) {
      for (let bx = 0; bx < reduced.width; bx++) {
        let sum = 0;
        let n = 0;
        for (let y = by * 7; y < Math.min(400, by * 7 + 7); y++)
          for (let x = bx * 7; x < Math.min(600, bx * 7 + 7); x++, n++) sum += full.data[(y * 600 + x) * 4]!;
        worst = Math.max(worst, Math.abs(sum / n - reduced.data[(by * reduced.width + bx) * 4]!));
      }
    }
    expect(worst).toBeLessThanOrEqual(0.5);
  });
});

describe("HEIC through the pipeline and POST /Medias", () => {
  it.each([
    { file: "grid.heic", shown: [600, 400], small: [256, 171] },
    { file: "grid-rotated.heic", shown: [400, 600], small: [171, 256] },
    { file: "single.heic", shown: [640, 480], small: [256, 192] },
  ])("$file: integrity passed, Small $small", async ({ file, shown, small }) => {
    const outcome = await processImage("heic", sample(file));
    expect(outcome).toMatchObject({ integrity: "passed", width: shown[0], height: shown[1], detail: null });
    expect(outcome.versions.map((v) => [v.size, v.width, v.height, v.contentType])).toEqual([["Small", small[0], small[1], "image/jpeg"]]);
  });

  it("an iPhone-style upload gets its Small version, a JPEG any client can show", async () => {
    const media = await uploadMedia(sample("grid-rotated.heic"), { name: "IMG_0001.HEIC", mimeType: "image/heic" });
    expect(media).toMatchObject({ isImage: true, width: 400, height: 600 });
    expect(media.recognition).toMatchObject({ detectedFormat: "heic", integrity: "passed", failedChecks: [] });
    expect(sizeNames(media)).toEqual(["Original", "Medium", "Small"]);
    const small = await fetchData(media.id, "?size=Small");
    expect(small.status).toBe(200);
    expect(small.headers.get("content-type")).toBe("image/jpeg");
    const original = await fetchData(media.id);
    expect(original.headers.get("content-type")).toBe("image/heic");
  });

  it.each([
    { case: "truncated", bytes: () => sample("grid.heic").subarray(0, 20_000) },
    { case: "header only", bytes: () => sample("grid.heic").subarray(0, 1200) },
  ])("a $case HEIC keeps its original and says why it has no versions", async ({ bytes }) => {
    const outcome = await processImage("heic", bytes());
    expect(outcome.integrity).toBe("failed");
    expect(outcome.detail).toMatch(/HEIF file/);
    expect(outcome.versions).toEqual([]);
  });
});
