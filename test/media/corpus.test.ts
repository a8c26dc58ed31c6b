/**
 * Every committed image (test/fixtures/images: the samples, and the corpus that
 * test/fixtures/corpus/generate.mjs makes with Debian's encoders) through POST /Medias, whole, cut in
 * half and with garbage in the middle: never a 5xx; a decoded image gets exactly the Medium and Small
 * sizes its shown size calls for; an image that cannot be decoded keeps its original and says why.
 */
import { describe, expect, it } from "vitest";
import { sniffFormat } from "../../src/media/image/formats";
import { displayedSize, readHeader } from "../../src/media/image/header";
import { MEDIUM_MAX_SIDE, SMALL_MAX_SIDE } from "../../src/media/image/limits";
import { fitWithin } from "../../src/media/image/resample";
import { allSamples, postMedia } from "./support/media";
import type { Media } from "../../src/media/schema";

const MIME: Record<string, string> = {
  jpeg: "image/jpeg",
  png: "image/png",
  gif: "image/gif",
  bmp: "image/bmp",
  tiff: "image/tiff",
  ico: "image/x-icon",
  webp: "image/webp",
  heic: "image/heic",
  svg: "image/svg+xml",
  avif: "image/avif",
};

/** Formats stored as uploaded, without a decode (the outcome says so). */
const NOT_DECODED = new Set(["ico", "svg"]);
/** Files of a decoded format in an encoding or a layout this service does not decode, and what it says. */
const REFUSED: Record<string, RegExp> = {
  "cjpeg-arithmetic.jpg": /arithmetic/i,
  // One coded picture over the single-picture limits (grids of that size are decoded).
  "avifenc-4mp.avif": /not a grid of tiles/,
  "single-12mp.heic": /one coded picture of 4000x3000/,
};

const images = allSamples()
  .map((s) => ({ ...s, format: sniffFormat(s.bytes) }))
  .filter((s): s is typeof s & { format: NonNullable<typeof s.format> } => s.format !== undefined);

async function upload(name: string, bytes: Uint8Array, format: string): Promise<Media> {
  const res = await postMedia(bytes, { name, mimeType: MIME[format]! });
  expect(res.status, `${name}: ${res.text}`).toBe(201);
  return res.body as Media;
}

/** The first half of the file, and the file with its middle third overwritten. */
const truncated = (b: Uint8Array) => b.slice(0, Math.floor(b.length / 2));
function garbled(b: Uint8Array): Uint8Array {
  const copy = b.slice();
  for (let i = Math.floor(b.length / 3); i < Math.floor((2 * b.length) / 3); i++) copy[i] = (i * 131) & 255;
  return copy;
}

describe("the image corpus through POST /Medias", () => {
  it("has every format this service recognises", () => {
    expect(new Set(images.map((i) => i.format))).toEqual(new Set(Object.keys(MIME)));
    expect(images.length).toBeGreaterThan(60);
  });

  it.each(images.map((i) => [i.name, i] as const))("%s: exact Medium and Small, or the reason there are none", async (_name, image) => {
    const media = await upload(image.name, image.bytes, image.format);
    const sizes = Object.fromEntries(media.sizes.map((s) => [s.name, s]));
    if (REFUSED[image.name]) {
      expect(media.recognition.integrity).toBe("notChecked");
      expect(media.recognition.detail).toMatch(REFUSED[image.name]!);
      expect(Object.keys(sizes)).toEqual(["Original"]);
      return;
    }
    if (NOT_DECODED.has(image.format)) {
      expect(media.recognition.integrity).toBe("notChecked");
      expect(media.recognition.detail).toBeTruthy();
      expect(Object.keys(sizes)).toEqual(["Original"]);
      return;
    }
    expect(media.recognition, `${image.name}: ${media.recognition.detail}`).toMatchObject({ integrity: "passed" });
    const shown = displayedSize(readHeader(image.format, image.bytes));
    expect([media.width, media.height]).toEqual([shown.width, shown.height]);
    for (const [size, limit] of [
      ["Medium", MEDIUM_MAX_SIDE],
      ["Small", SMALL_MAX_SIDE],
    ] as const) {
      const want =
        Math.max(shown.width!, shown.height!) > limit
          ? fitWithin(shown.width!, shown.height!, limit)
          : { width: shown.width, height: shown.height };
      expect([sizes[size]?.width, sizes[size]?.height], `${image.name} ${size}`).toEqual([want.width, want.height]);
    }
  });

  it.each(images.filter((i) => !NOT_DECODED.has(i.format) && i.format !== "svg").map((i) => [i.name, i] as const))(
    "%s cut in half: kept, failed, and says why",
    async (_name, image) => {
      const media = await upload(image.name, truncated(image.bytes), image.format);
      expect(media.sizes.map((s) => s.name)).toEqual(["Original"]);
      expect(media.recognition.integrity, `${image.name}: ${JSON.stringify(media.recognition)}`).not.toBe("passed");
      expect(media.recognition.detail).toBeTruthy();
    },
  );

  it.each(images.map((i) => [i.name, i] as const))(
    "%s with garbage in its middle: no 5xx, and either checked or said why not",
    async (_name, image) => {
      const media = await upload(image.name, garbled(image.bytes), image.format);
      if (media.recognition.integrity !== "passed") {
        expect(media.recognition.detail).toBeTruthy();
        expect(media.sizes.map((s) => s.name)).toEqual(["Original"]);
      }
    },
  );
});
