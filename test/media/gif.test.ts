/**
 * GIF, first frame, row by row (src/media/image/gif.ts). The files come from ImageMagick
 * (test/fixtures/corpus/generate.mjs); each decode is compared with photon's (the Rust image crate),
 * which decodes the whole file at once and is what served GIFs before.
 */
import { describe, expect, it } from "vitest";
import { CorruptImageError } from "../../src/media/image/errors";
import { decodeGifReduced } from "../../src/media/image/gif";
import { withPhoton } from "../../src/media/image/photon/codec";
import { processImage } from "../../src/media/image/pipeline";
import type { Pixels } from "../../src/media/image/resample";
import { sample, sizeNames, uploadMedia } from "./support/media";

/** Largest difference with photon's RGBA: alpha everywhere, colour where opaque. */
function differenceFromPhoton(file: string, image: Pixels): number {
  const reference = withPhoton((photon) => photon.decode(sample(file)));
  expect([image.width, image.height]).toEqual([reference.width, reference.height]);
  let worst = 0;
  for (let i = 0; i < reference.data.length; i += 4) {
    worst = Math.max(worst, Math.abs(reference.data[i + 3]! - image.data[i + 3]!));
    if (reference.data[i + 3] === 255)
      for (let c = 0; c < 3; c++) worst = Math.max(worst, Math.abs(reference.data[i + c]! - image.data[i + c]!));
  }
  return worst;
}

describe("GIF decoding", () => {
  it.each(["plain.gif", "interlaced.gif", "transparent.gif", "animated.gif", "offset.gif", "picture.gif"])(
    "%s: photon's pixels exactly",
    async (file) => {
      expect(differenceFromPhoton(file, await decodeGifReduced(sample(file), 1))).toBe(0);
    },
  );

  it("an interlaced frame's rows are put back in order", async () => {
    const plain = await decodeGifReduced(sample("plain.gif"), 1);
    const interlaced = await decodeGifReduced(sample("interlaced.gif"), 1);
    expect(interlaced.data).toEqual(plain.data);
  });

  it("the first frame of an animation, transparency, and a frame smaller than its screen", async () => {
    const first = await decodeGifReduced(sample("animated.gif"), 1);
    expect(first.data).toEqual((await decodeGifReduced(sample("plain.gif"), 1)).data);
    const transparent = await decodeGifReduced(sample("transparent.gif"), 1);
    expect(transparent.data[(80 * 160 + 120) * 4 + 3]).toBe(0);
    expect(transparent.data[(10 * 160 + 10) * 4 + 3]).toBe(255);
    const offset = await decodeGifReduced(sample("offset.gif"), 1);
    expect([offset.width, offset.height]).toEqual([200, 150]);
    expect(offset.data[(5 * 200 + 5) * 4 + 3]).toBe(0); // outside the frame
    expect(offset.data[(15 * 200 + 25) * 4 + 3]).toBe(255);
  });

  it("averages boxes as rows arrive", async () => {
    const full = await decodeGifReduced(sample("picture.gif"), 1);
    const reduced = await decodeGifReduced(sample("picture.gif"), 5);
    expect([reduced.width, reduced.height]).toEqual([240, 160]);
    let sum = 0;
    for (let y = 0; y < 5; y++) for (let x = 0; x < 5; x++) sum += full.data[(y * full.width + x) * 4 + 1]!;
    expect(Math.abs(reduced.data[1]! - sum / 25)).toBeLessThanOrEqual(0.5);
  });

  it.each([
    { case: "truncated", bytes: () => sample("plain.gif").subarray(0, 1500) },
    { case: "no frame", bytes: () => sample("plain.gif").subarray(0, 200) },
  ])("$case: CorruptImageError", async ({ bytes }) => {
    await expect(decodeGifReduced(bytes(), 1)).rejects.toThrow(CorruptImageError);
  });

  it("a GIF upload gets Medium and Small; a truncated one keeps its original and says why", async () => {
    const media = await uploadMedia(sample("picture.gif"), { name: "chart.gif", mimeType: "image/gif" });
    expect(media.recognition).toMatchObject({ detectedFormat: "gif", integrity: "passed" });
    expect(sizeNames(media)).toEqual(["Original", "Medium", "Small"]);
    const outcome = await processImage("gif", sample("plain.gif").subarray(0, 1500));
    expect(outcome).toMatchObject({ integrity: "failed", versions: [] });
    expect(outcome.detail).toMatch(/the GIF ends inside its first frame/);
  });
});
