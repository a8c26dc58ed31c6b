/**
 * AVIF, decoded by libavif/dav1d (@jsquash/avif): a single picture whole up to AVIF_MAX_PIXELS, a
 * grid a tile at a time. The files come from avifenc and sharp (test/fixtures/corpus/generate.mjs);
 * pixels are checked against the corpus picture's formula (lossy, so within a tolerance).
 */
import { describe, expect, it } from "vitest";
import { decodeAvifReduced } from "../../src/media/image/avif";
import { CorruptImageError, ImageTooLargeError } from "../../src/media/image/errors";
import { decodeJpeg } from "../../src/media/image/jpeg/decoder";
import { AVIF_MAX_PIXELS, AVIF_MAX_WASM_BYTES } from "../../src/media/image/limits";
import { readHeader } from "../../src/media/image/header";
import { processImage } from "../../src/media/image/pipeline";
import { heifFile } from "../../src/media/image/segments";
import { heicHeader, sample, sizeNames, uploadMedia } from "./support/media";

function expected(x: number, y: number, width: number, height: number): number[] {
  const corner = x < width / 4 && y < height / 4;
  return [Math.round((x / width) * 255), Math.round((y / height) * 255), corner ? 20 : 128];
}

/** The largest difference from the corpus picture (of width x height) over a sample of its pixels. */
function worstError(pixels: { width: number; height: number; data: Uint8Array; channels?: number }, width = 320, height = 240): number {
  const channels = pixels.channels ?? 4;
  let worst = 0;
  for (let y = 4; y < pixels.height; y += 9) {
    for (let x = 6; x < pixels.width; x += 13) {
      if (Math.abs(x - width / 4) < 8 || Math.abs(y - height / 4) < 8) continue; // the dark corner's edges ring
      const want = expected(x, y, width, height);
      for (let c = 0; c < 3; c++) worst = Math.max(worst, Math.abs(pixels.data[(y * pixels.width + x) * channels + c]! - want[c]!));
    }
  }
  return worst;
}

/** A copy of `file` with `edit` applied to the bytes of one of its items. */
function edited(
  file: string,
  pick: (items: ReturnType<typeof heifFile>) => Uint8Array,
  edit: (body: Uint8Array, view: DataView) => void,
): Uint8Array {
  const bytes = sample(file).slice();
  const body = pick(heifFile(bytes));
  edit(body, new DataView(body.buffer, body.byteOffset, body.byteLength));
  return bytes;
}

const gridOf = (file: ReturnType<typeof heifFile>) => file.items.get(file.primary!)!.body;

describe("AVIF decoding", () => {
  it.each(["avifenc-420.avif", "avifenc-444-10bit.avif"])("%s: the picture, within a lossy codec's error", async (file) => {
    const pixels = await decodeAvifReduced(sample(file), 320, 240, 1);
    expect([pixels.width, pixels.height]).toEqual([320, 240]);
    expect(worstError(pixels)).toBeLessThan(16);
  });

  it("a grid is decoded tile by tile into the whole picture, seams included", async () => {
    const file = heifFile(sample("avifenc-grid.avif"));
    expect(file.items.get(file.primary!)!.type).toBe("grid");
    expect(file.items.get(file.primary!)!.references.get("dimg")).toHaveLength(4);
    const pixels = await decodeAvifReduced(sample("avifenc-grid.avif"), 320, 240, 1);
    expect([pixels.width, pixels.height]).toEqual([320, 240]);
    expect(worstError(pixels)).toBeLessThan(16);
    // Either side of the tiles' seams (x 160, y 120) continues the picture.
    for (const [x, y] of [
      [159, 60],
      [160, 60],
      [240, 119],
      [240, 120],
      [159, 119],
      [160, 120],
    ] as const) {
      const want = expected(x, y, 320, 240);
      for (let c = 0; c < 3; c++)
        expect(Math.abs(pixels.data[(y * 320 + x) * 4 + c]! - want[c]!), `(${x}, ${y}) channel ${c}`).toBeLessThan(16);
    }
    const halved = await decodeAvifReduced(sample("avifenc-grid.avif"), 320, 240, 2);
    expect([halved.width, halved.height]).toEqual([160, 120]);
  });

  it("a grid's alpha grid is decoded with it", async () => {
    const pixels = await decodeAvifReduced(sample("avifenc-grid-alpha.avif"), 320, 240, 1);
    expect(pixels.data[(120 * 320 + 160) * 4 + 3]).toBeGreaterThan(250);
    expect(pixels.data[(5 * 320 + 5) * 4 + 3]).toBeLessThan(5);
    expect(pixels.data[(235 * 320 + 315) * 4 + 3]).toBeLessThan(5);
    expect(pixels.data[(200 * 320 + 250) * 4 + 3]).toBeGreaterThan(250);
  });

  it("a grid whose tiles reach past its picture is cut to the picture", async () => {
    // The grid says 300 x 220: the right and bottom tiles reach 20 pixels past it.
    const bytes = edited("avifenc-grid.avif", gridOf, (_, view) => {
      view.setUint16(4, 300);
      view.setUint16(6, 220);
    });
    const pixels = await decodeAvifReduced(bytes, 300, 220, 1);
    expect([pixels.width, pixels.height]).toEqual([300, 220]);
    expect(worstError(pixels)).toBeLessThan(16);
  });

  it("a picture larger than its header says stops at the memory ceiling, kept and said why", async () => {
    // avifenc-4mp.avif is one coded picture of 2400 x 1800; its ispe is made to say 1000 x 750, under the 2 MP limit.
    const ispeOf = (f: ReturnType<typeof heifFile>) => f.items.get(f.primary!)!.properties.find((p) => p.type === "ispe")!.body;
    const lying = edited("avifenc-4mp.avif", ispeOf, (_, view) => {
      view.setUint32(4, 1000);
      view.setUint32(8, 750);
    });
    expect(readHeader("avif", lying)).toMatchObject({ width: 1000, height: 750 });
    await expect(decodeAvifReduced(lying, 1000, 750, 1)).rejects.toThrow(
      `more than the ${AVIF_MAX_WASM_BYTES / 2 ** 20} MiB of memory it may have`,
    );
    const outcome = await processImage("avif", lying);
    expect(outcome).toMatchObject({ integrity: "notChecked", versions: [] });
    // Told the truth, it is refused before anything is decoded; and the next image decodes as before.
    expect((await processImage("avif", sample("avifenc-4mp.avif"))).detail).toMatch(
      /2400x1800 is more than the 2000000 pixels .* not a grid of tiles/,
    );
    expect((await processImage("avif", sample("avifenc-420.avif"))).integrity).toBe("passed");
  });

  it("refuses a grid that does not add up, and tiles too large to decode", async () => {
    // Three rows named, four tiles referenced.
    const rows = edited("avifenc-grid.avif", gridOf, (body) => (body[2] = 2));
    await expect(decodeAvifReduced(rows, 320, 240, 1)).rejects.toThrow(/names 4 tiles for its 6 cells/);
    // A grid describing another picture than its header: the limits were checked against the header.
    const other = edited("avifenc-grid.avif", gridOf, (_, view) => view.setUint16(4, 300));
    await expect(decodeAvifReduced(other, 320, 240, 1)).rejects.toThrow(/grid describes a 300x240 picture, its header 320x240/);
    // Tiles that do not cover the picture.
    const uncovered = edited("avifenc-grid.avif", gridOf, (_, view) => view.setUint16(4, 400));
    await expect(decodeAvifReduced(uncovered, 400, 240, 1)).rejects.toThrow(/do not cover its 400x240 picture/);
    // A tile claiming 2000 x 1500 is refused before anything is decoded.
    const tiles = sample("avifenc-grid.avif").slice();
    const file = heifFile(tiles);
    const ispe = file.items
      .get(file.items.get(file.primary!)!.references.get("dimg")![0]!)!
      .properties.find((p) => p.type === "ispe")!.body;
    new DataView(ispe.buffer, ispe.byteOffset).setUint32(4, 2000);
    new DataView(ispe.buffer, ispe.byteOffset).setUint32(8, 1500);
    await expect(decodeAvifReduced(tiles, 320, 240, 1)).rejects.toThrow(ImageTooLargeError);
    // A tile whose data is damaged names the tile.
    const broken = edited(
      "avifenc-grid.avif",
      (f) => f.items.get(f.items.get(f.primary!)!.references.get("dimg")![2]!)!.body,
      (body) => body.fill(0xff, 4),
    );
    await expect(decodeAvifReduced(broken, 320, 240, 1)).rejects.toThrow(/tile 3 of the AVIF grid could not be decoded/);
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

  it("a grid AVIF larger than one picture may be gets its versions, exact in size and colour", async () => {
    const bytes = sample("avifenc-grid-4mp.avif");
    expect(2400 * 1800).toBeGreaterThan(AVIF_MAX_PIXELS);
    const outcome = await processImage("avif", bytes);
    expect(outcome.versions.map((v) => [v.size, v.width, v.height])).toEqual([
      ["Medium", 1000, 750],
      ["Small", 256, 192],
    ]);
    const medium = decodeJpeg(outcome.versions[0]!.bytes, { blockSize: 8, maxCoefficientBytes: 1 << 26 });
    expect(worstError(medium, 1000, 750)).toBeLessThan(16);
    const media = await uploadMedia(bytes, { name: "grid.avif", mimeType: "image/avif" });
    expect(media.recognition).toMatchObject({ detectedFormat: "avif", integrity: "passed" });
    expect(sizeNames(media)).toEqual(["Original", "Medium", "Small"]);
  });
});
