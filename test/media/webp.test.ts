/**
 * Lossy WebP, a macroblock row at a time (src/media/image/webp). The files come from libwebp's
 * cwebp in the variations its decoder must follow (test/fixtures/corpus/generate.mjs); each decode
 * is compared bit for bit with libwebp's own (dwebp -yuv for lossy, dwebp -pam for lossless; by
 * SHA-256 in webp-reference.json).
 */
import { describe, expect, it } from "vitest";
import { CorruptImageError } from "../../src/media/image/errors";
import { decodeGifReduced } from "../../src/media/image/gif";
import { processImage } from "../../src/media/image/pipeline";
import { decodeLossyRows, decodeWebpReduced, webpLayout } from "../../src/media/image/webp/decode";
import { decodeVp8l, vp8lHeader } from "../../src/media/image/webp/vp8l";
import { sample, sizeNames, uploadMedia } from "./support/media";
import reference from "../fixtures/webp-reference.json";

async function yuvDigest(bytes: Uint8Array): Promise<string | null> {
  const planes: { y: Uint8Array[]; u: Uint8Array[]; v: Uint8Array[]; a: Uint8Array[] } = { y: [], u: [], v: [], a: [] };
  const { kind, frame } = webpLayout(bytes);
  if (kind !== "lossy") return null;
  await decodeLossyRows(frame, (y, yRow, uRow, vRow, aRow) => {
    planes.y.push(yRow.slice());
    if ((y & 1) === 0) {
      planes.u.push(uRow.slice());
      planes.v.push(vRow.slice());
    }
    if (aRow) planes.a.push(aRow.slice());
  });
  const all = [...planes.y, ...planes.u, ...planes.v, ...planes.a];
  const joined = new Uint8Array(all.reduce((n, r) => n + r.length, 0));
  let at = 0;
  for (const r of all) {
    joined.set(r, at);
    at += r.length;
  }
  return hex(joined);
}

async function hex(bytes: Uint8Array): Promise<string> {
  return [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

const yuvReference = reference.yuv as Record<string, string>;
const rgbaReference = reference.rgba as Record<string, string>;

describe("WebP decoding", () => {
  it.each(Object.keys(yuvReference))("%s: libwebp's Y, U, V (and alpha) exactly", async (file) => {
    expect(await yuvDigest(sample(file))).toBe(yuvReference[file]);
  });

  it.each(Object.keys(rgbaReference))("%s (lossless): libwebp's RGBA exactly", async (file) => {
    // The rows as decoded (the reducer would zero the colour of fully transparent pixels).
    const vp8l = webpLayout(sample(file)).frame.vp8l;
    const { width, height } = vp8lHeader(vp8l!);
    const rgba = new Uint8Array(width * height * 4);
    await decodeVp8l(vp8l!, (y, argb) => {
      for (let x = 0; x < width; x++)
        rgba.set([(argb[x]! >>> 16) & 255, (argb[x]! >>> 8) & 255, argb[x]! & 255, argb[x]! >>> 24], (y * width + x) * 4);
    });
    expect(await hex(rgba)).toBe(rgbaReference[file]);
    // Through the reducer, the visible pixels are the same.
    const reduced = (await decodeWebpReduced(sample(file), 1))!;
    for (let i = 0; i < rgba.length; i += 4)
      if (rgba[i + 3] === 255) expect(reduced.data.subarray(i, i + 4)).toEqual(rgba.subarray(i, i + 4));
  });

  it("the phone photo fixtures decode exactly too", async () => {
    expect(await yuvDigest(sample("photo.webp"))).toMatch(/^[0-9a-f]{64}$/);
    const pixels = (await decodeWebpReduced(sample("photo.webp"), 1))!;
    expect([pixels.width, pixels.height]).toEqual([1400, 1000]);
  });

  it("keeps an uncompressed alpha plane: transparent outside the circle", async () => {
    const pixels = (await decodeWebpReduced(sample("lossy-alpha-raw.webp"), 1))!;
    expect(pixels.data[(100 * 333 + 160) * 4 + 3]).toBe(255);
    expect(pixels.data[(5 * 333 + 5) * 4 + 3]).toBe(0);
  });

  it("an animation shows its first frame, placed on its canvas", async () => {
    // Frame 1: 120 x 90 red at (40, 30) on a 320 x 240 canvas; frame 2: the whole canvas blue.
    const pixels = await decodeWebpReduced(sample("animated-lossy.webp"), 1);
    expect([pixels.width, pixels.height]).toEqual([320, 240]);
    const at = (x: number, y: number) => [...pixels.data.subarray((y * 320 + x) * 4, (y * 320 + x) * 4 + 4)];
    expect(at(100, 75)[0]).toBeGreaterThan(180);
    expect(at(100, 75)[2]).toBeLessThan(80);
    expect(at(100, 75)[3]).toBe(255);
    expect(at(10, 10)[3]).toBe(0);
    expect(at(300, 200)[3]).toBe(0);
    const lossless = await decodeWebpReduced(sample("animated-lossless.webp"), 1);
    expect([lossless.width, lossless.height]).toEqual([160, 120]);
    // gif2webp keeps the GIF's first frame losslessly: the same pixels as our GIF decoder's.
    expect(lossless.data).toEqual((await decodeGifReduced(sample("animated.gif"), 1)).data);
  });

  it("a VP8L-compressed alpha plane gives the same picture as a stored one", async () => {
    expect(await hex((await decodeWebpReduced(sample("lossy-alpha-lossless.webp"), 1))!.data)).toBe(
      await hex((await decodeWebpReduced(sample("lossy-alpha-raw.webp"), 1))!.data),
    );
  });

  it.each([
    { case: "truncated", bytes: () => sample("photo.webp").subarray(0, 6_000) },
    { case: "cut inside its macroblocks (chunk size patched)", bytes: () => patchedSize(sample("photo.webp").subarray(0, 6_000)) },
    { case: "garbage in the first partition", bytes: () => garble(sample("lossy-default.webp"), 40, 120) },
    { case: "lossless, truncated (sizes patched)", bytes: () => patchedSize(sample("lossless-noisy-alpha.webp").subarray(0, 9_000)) },
    { case: "lossless, garbage prefix codes", bytes: () => garble(sample("lossless-noisy-alpha.webp"), 30, 200) },
  ])("$case: CorruptImageError", async ({ bytes }) => {
    await expect(decodeWebpReduced(bytes(), 1)).rejects.toThrow(CorruptImageError);
  });

  it("refuses a lossless WebP naming 65,536 prefix-code groups before reading them", async () => {
    await expect(decodeWebpReduced(manyGroups(), 1)).rejects.toThrow(/names 65536 prefix-code groups; at most 4096/);
  });
});

/** A truncated file whose RIFF and VP8 (or VP8L) sizes say it is whole: the decoder itself must notice. */
function patchedSize(bytes: Uint8Array): Uint8Array {
  const copy = bytes.slice();
  const view = new DataView(copy.buffer);
  view.setUint32(4, copy.length - 8, true);
  view.setUint32(16, copy.length - 20, true);
  return copy;
}

/**
 * A 1 x 1 lossless WebP whose meta image (itself 1 x 1, one literal pixel) names group 65,535: a
 * decoder that believed it would read 65,536 groups of five prefix codes.
 */
function manyGroups(): Uint8Array {
  const bits: number[] = [];
  const put = (value: number, n: number) => {
    for (let i = 0; i < n; i++) bits.push((value >> i) & 1);
  };
  put(0x2f, 8); // signature
  put(0, 14); // width - 1
  put(0, 14); // height - 1
  put(0, 1); // no alpha
  put(0, 3); // version
  put(0, 1); // no transform
  put(0, 1); // no colour cache
  put(1, 1); // meta prefix codes
  put(0, 3); // meta bits - 2
  // The meta image: no colour cache, then five simple one-symbol codes: green 0xff, red 0xff,
  // blue 0, alpha 0, distance 0, so its one pixel is 0x00ffff00 (group 0xffff).
  put(0, 1);
  for (const symbol of [0xff, 0xff, 0, 0, 0]) {
    put(1, 1); // simple
    put(0, 1); // one symbol
    put(1, 1); // 8 bits
    put(symbol, 8);
  }
  while (bits.length % 8) bits.push(0);
  const data = new Uint8Array(bits.length / 8 + 16);
  for (let i = 0; i < bits.length; i++) data[i >> 3]! |= bits[i]! << (i & 7);
  const riff = new Uint8Array(20 + data.length);
  riff.set(new TextEncoder().encode("RIFF"), 0);
  new DataView(riff.buffer).setUint32(4, riff.length - 8, true);
  riff.set(new TextEncoder().encode("WEBPVP8L"), 8);
  new DataView(riff.buffer).setUint32(16, data.length, true);
  riff.set(data, 20);
  return riff;
}

function garble(bytes: Uint8Array, from: number, to: number): Uint8Array {
  const copy = bytes.slice();
  for (let i = from; i < to; i++) copy[i] = 0xff;
  return copy;
}

describe("WebP through the pipeline and POST /Medias", () => {
  it.each([
    { file: "lossy-default.webp", size: [333, 211], small: [256, 162], type: "image/jpeg" },
    { file: "lossy-alpha-raw.webp", size: [333, 211], small: [256, 162], type: "image/png" },
    { file: "lossless.webp", size: [333, 211], small: [256, 162], type: "image/png" }, // lossless stays lossless
    { file: "lossy-alpha-lossless.webp", size: [333, 211], small: [256, 162], type: "image/png" },
    { file: "animated-lossy.webp", size: [320, 240], small: [256, 192], type: "image/png" }, // transparent around the first frame
  ])("$file: Small $small as $type", async ({ file, size, small, type }) => {
    const outcome = await processImage("webp", sample(file));
    expect(outcome).toMatchObject({ integrity: "passed", width: size[0], height: size[1] });
    expect(outcome.versions.map((v) => [v.size, v.width, v.height, v.contentType])).toEqual([["Small", small[0], small[1], type]]);
  });

  it("a 1400 x 1000 phone WebP gets Medium and Small; a truncated one keeps its original and says why", async () => {
    const media = await uploadMedia(sample("photo.webp"), { name: "IMG_0001.webp", mimeType: "image/webp" });
    expect(media.recognition).toMatchObject({ detectedFormat: "webp", integrity: "passed" });
    expect(media.sizes.map((s) => [s.name, s.width, s.height])).toEqual([
      ["Original", 1400, 1000],
      ["Medium", 1000, 714],
      ["Small", 256, 183],
    ]);
    const broken = await uploadMedia(sample("photo.webp").subarray(0, 6_000), { name: "broken.webp", mimeType: "image/webp" });
    expect(broken.recognition.integrity).toBe("failed");
    expect(broken.recognition.detail).toMatch(/WebP's VP8 chunk is cut short: 10530 bytes announced, 5980 present/);
    expect(sizeNames(broken)).toEqual(["Original"]);
  });
});
