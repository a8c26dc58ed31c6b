/**
 * The image pipeline below HTTP: the scaled JPEG decoder, the pixel limits that keep bombs from
 * being decoded, photon's lifecycle (lazy, replaced after a trap), and the magic-byte sniffing.
 */
import { describe, expect, it } from "vitest";
import { CorruptImageError, ImageTooLargeError } from "../../src/media/image/errors";
import { sniffFormat } from "../../src/media/image/formats";
import { readHeader } from "../../src/media/image/header";
import { nclxTransform, readJpegIcc, readPngIcc, srgbTransform } from "../../src/media/image/icc";
import { bmpLayout, decodeBmpReduced } from "../../src/media/image/bmp-stream";
import { BoxReducer } from "../../src/media/image/reduce";
import { decodeJpeg } from "../../src/media/image/jpeg/decoder";
import { JPEG_MAX_PIXELS } from "../../src/media/image/limits";
import { photonStats, withPhoton } from "../../src/media/image/photon/codec";
import { processImage, type ImageCodec } from "../../src/media/image/pipeline";
import { fitWithin, resize } from "../../src/media/image/resample";
import { gifDeclaring, heicHeader, jpegDeclaring, pngDeclaring, sample, tiffBytes, uploadMedia } from "./support/media";

const options = { blockSize: 8 as const, maxCoefficientBytes: 64 << 20 };

describe("the JPEG decoder", () => {
  it("decodes restart intervals exactly (flat blocks of known values)", () => {
    const image = decodeJpeg(sample("restart.jpg"), options);
    expect([image.width, image.height, image.channels]).toEqual([64, 48, 1]);
    for (let block = 0; block < 48; block++) {
      const x = (block % 8) * 8 + 3;
      const y = Math.floor(block / 8) * 8 + 5;
      expect(image.data[y * 64 + x]).toBe(16 + 4 * block);
    }
  });

  it.each([1, 2, 3, 4, 5, 6, 7, 8] as const)("decodes at %i/8 of the size", (blockSize) => {
    const image = decodeJpeg(sample("photo.jpg"), { ...options, blockSize });
    expect([image.width, image.height, image.channels]).toEqual([Math.ceil((1600 * blockSize) / 8), Math.ceil((1200 * blockSize) / 8), 3]);
    // The dark square in the top-left quarter and the bright red ramp at the right edge survive.
    expect(image.data[0]).toBeLessThan(40);
    expect(image.data[((image.height >> 1) * image.width + image.width - 1) * 3]).toBeGreaterThan(200);
  });

  it("agrees with itself across scales (the 1/8 decode is the block means of the full one)", () => {
    const full = decodeJpeg(sample("grey.jpg"), options);
    const eighth = decodeJpeg(sample("grey.jpg"), { ...options, blockSize: 1 });
    let worst = 0;
    for (let by = 0; by < eighth.height; by++) {
      for (let bx = 0; bx < eighth.width; bx++) {
        let sum = 0;
        for (let y = 0; y < 8; y++) for (let x = 0; x < 8; x++) sum += full.data[(by * 8 + y) * full.width + bx * 8 + x]!;
        worst = Math.max(worst, Math.abs(sum / 64 - eighth.data[by * eighth.width + bx]!));
      }
    }
    expect(worst).toBeLessThan(3);
  });

  it("decodes progressive JPEGs and reads EXIF orientation", () => {
    expect(decodeJpeg(sample("progressive.jpg"), { ...options, blockSize: 4 })).toMatchObject({ width: 600, height: 450 });
    expect(decodeJpeg(sample("progressive.jpg"), { ...options, blockSize: 7 })).toMatchObject({ width: 1050, height: 788 });
    expect(decodeJpeg(sample("rotated.jpg"), { ...options, blockSize: 2 })).toMatchObject({ width: 300, height: 200, orientation: 6 });
  });

  it.each([
    { case: "truncated", bytes: () => sample("photo.jpg").subarray(0, 20_000), error: CorruptImageError },
    { case: "without SOI", bytes: () => sample("photo.jpg").subarray(2), error: CorruptImageError },
    { case: "with a wrong restart marker", bytes: () => wrongRestart(), error: CorruptImageError },
    { case: "declaring 2000x2000 with 4 bytes of data", bytes: () => jpegDeclaring(2000, 2000), error: CorruptImageError },
  ])("refuses a JPEG $case", ({ bytes, error }) => {
    expect(() => decodeJpeg(bytes(), options)).toThrow(error);
  });

  it("converts a CMYK JPEG (Adobe, inverted) to its colours, not a negative", () => {
    // The fixture is test/fixtures/generate.mjs's scene in CMYK: a dark corner, red rising with x,
    // green with y, blue bars of 200 and 60 (64 px wide). libvips converted it with an ICC profile,
    // the decoder without one, so the colours come back close, not exact.
    const image = decodeJpeg(sample("cmyk.jpg"), { blockSize: 8, maxCoefficientBytes: 64 * 1024 * 1024 });
    expect([image.width, image.height, image.channels]).toEqual([320, 240, 3]);
    const at = (x: number, y: number) => Array.from(image.data.subarray((y * 320 + x) * 3, (y * 320 + x) * 3 + 3));
    const near = (actual: number[], expected: number[]) =>
      actual.forEach((v, i) => expect(Math.abs(v - expected[i]!), `${actual} vs ${expected}`).toBeLessThanOrEqual(40));
    near(at(10, 10), [20, 20, 20]);
    near(at(300, 200), [239, 213, 60]);
    // Without the profile, saturated colours drift (up to ~60 levels), but every trend of the scene
    // holds, where a negative would reverse each one.
    expect(at(300, 200)[0]! - at(100, 200)[0]!).toBeGreaterThan(80);
    expect(at(200, 220)[1]! - at(200, 60)[1]!).toBeGreaterThan(80);
    expect(at(100, 200)[2]! - at(150, 200)[2]!).toBeGreaterThan(60);
  });

  it.each(["adobe-ycck.jpg", "imagemagick-cmyk.jpg"])("converts a YCCK JPEG (%s: Adobe transform 2) to the picture's colours", (file) => {
    // The corpus picture (test/fixtures/corpus/generate.mjs) through ImageMagick's naive CMYK, stored
    // as YCCK by libjpeg (corpus/ycck.c) or by ImageMagick: the naive conversion back is the picture,
    // within JPEG's error. A decoder that skipped the YCC step would be off by far more.
    const image = decodeJpeg(sample(file), { blockSize: 8, maxCoefficientBytes: 64 * 1024 * 1024 });
    expect([image.width, image.height, image.channels]).toEqual([320, 240, 3]);
    let worst = 0;
    for (let y = 4; y < 240; y += 9) {
      for (let x = 6; x < 320; x += 13) {
        if (Math.abs(x - 80) < 8 || Math.abs(y - 60) < 8) continue; // the dark corner's edges ring
        const want = [Math.round((x / 320) * 255), Math.round((y / 240) * 255), x < 80 && y < 60 ? 20 : 128];
        for (let c = 0; c < 3; c++) worst = Math.max(worst, Math.abs(image.data[(y * 320 + x) * 3 + c]! - want[c]!));
      }
    }
    expect(worst).toBeLessThan(16);
  });

  it("refuses a progressive JPEG whose coefficients exceed the budget", () => {
    expect(() => decodeJpeg(sample("progressive.jpg"), { blockSize: 1, maxCoefficientBytes: 1024 })).toThrow(ImageTooLargeError);
  });
});

/** pngDeclaring with bit depth 16 (IHDR byte 24) and its CRC fixed. */
function png16Declaring(width: number, height: number): Uint8Array {
  const bytes = pngDeclaring(width, height).slice();
  bytes[24] = 16;
  let c = 0xffffffff;
  for (let i = 12; i < 29; i++) {
    c ^= bytes[i]!;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  }
  new DataView(bytes.buffer).setUint32(29, (c ^ 0xffffffff) >>> 0);
  return bytes;
}

function wrongRestart(): Uint8Array {
  const bytes = sample("restart.jpg").slice();
  const at = bytes.findIndex((b, i) => b === 0xff && bytes[i + 1] === 0xd1);
  bytes[at + 1] = 0xd5;
  return bytes;
}

describe("decompression bombs are never decoded", () => {
  const neverDecodes: ImageCodec = {
    encode: () => {
      throw new Error("a bomb reached the encoder");
    },
  };
  it.each([
    { case: "a 64000x64000 PNG", format: "png", bytes: () => pngDeclaring(64000, 64000), size: [64000, 64000] },
    { case: "a 65535x65535 GIF", format: "gif", bytes: () => gifDeclaring(65535, 65535), size: [65535, 65535] },
    { case: "a 65000x65000 JPEG", format: "jpeg", bytes: () => jpegDeclaring(65000, 65000), size: [65000, 65000] },
    // Within the pixel limit, but one row of it would be hundreds of MiB.
    { case: "a 110000000x1 PNG", format: "png", bytes: () => pngDeclaring(110_000_000, 1), size: [110_000_000, 1] },
  ] as const)("$case: kept as uploaded, integrity not checked", async ({ format, bytes, size }) => {
    const outcome = await processImage(format, bytes(), neverDecodes);
    expect(outcome).toMatchObject({ integrity: "notChecked", width: size[0], height: size[1], versions: [] });
    expect(outcome.detail).toMatch(/pixels|MiB/);
  });

  it("a 2100x2100 PNG is decoded row by row into Medium and Small", async () => {
    const outcome = await processImage("png", sample("large-flat.png"));
    expect(outcome.integrity, outcome.detail ?? "").toBe("passed");
    expect(outcome.versions.map((v) => [v.size, v.width, v.height])).toEqual([
      ["Medium", 1000, 1000],
      ["Small", 256, 256],
    ]);
    // Boxes of 2 x 2 pixels while decoding (1050 px), the resampler does the rest.
    expect(outcome.decoded).toMatchObject({ width: 1050, height: 1050 });
  });

  it("a 1800x1800 16-bit PNG header with no pixel data fails its integrity check without decoding a row", async () => {
    const outcome = await processImage("png", png16Declaring(1800, 1800), neverDecodes);
    expect(outcome).toMatchObject({ integrity: "failed", versions: [] });
    expect(outcome.detail).toMatch(/ends after 0 of 1800 rows/);
  });

  it("through HTTP: 201, recognised as an image, original only", async () => {
    const media = await uploadMedia(pngDeclaring(64000, 64000), { name: "bomb.png", mimeType: "image/png" });
    expect(media).toMatchObject({ isImage: true, width: 64000, height: 64000 });
    expect(media.recognition.integrity).toBe("notChecked");
    expect(media.sizes.map((s) => s.name)).toEqual(["Original"]);
  });

  it("documents the limits it enforces", () => {
    expect(JPEG_MAX_PIXELS).toBeGreaterThanOrEqual(108_000_000);
  });
});

describe("photon", () => {
  it("is instantiated on first use, and replaced after a trap", () => {
    withPhoton(() => undefined);
    const before = photonStats();
    expect(before.instantiations).toBeGreaterThanOrEqual(1);
    // A PNG whose pixels do not inflate: photon panics (RuntimeError: unreachable).
    const broken = sample("alpha.png").slice();
    for (let i = 200; i < 2000; i++) broken[i] = 0;
    expect(() => withPhoton((photon) => photon.decode(broken))).toThrow();
    const after = photonStats();
    expect(after.dropsAfterFailure).toBe(before.dropsAfterFailure + 1);
    expect(after.memoryBytes).toBe(0);
    // The next image gets a fresh instance and decodes.
    expect(withPhoton((photon) => photon.decode(sample("alpha.webp")))).toMatchObject({ width: 400, height: 300 });
    expect(photonStats().instantiations).toBe(after.instantiations + 1);
  });

  it("drops an instance whose memory grew large, so the isolate gets it back", () => {
    const before = photonStats();
    // 2100 x 2100 decoded directly (the pipeline would refuse it): about 55 MB of WASM memory.
    expect(withPhoton((photon) => photon.decode(sample("large-flat.png")))).toMatchObject({ width: 2100, height: 2100 });
    const after = photonStats();
    expect(after.peakMemoryBytes).toBeGreaterThan(40 * 1024 * 1024);
    expect(after.dropsForMemory).toBe(before.dropsForMemory + 1);
    expect(after.memoryBytes).toBe(0);
  });
});

describe("magic bytes and headers", () => {
  it.each([
    ["jpeg", () => sample("photo.jpg")],
    ["png", () => sample("alpha.png")],
    ["gif", () => sample("picture.gif")],
    ["webp", () => sample("photo.webp")],
    ["bmp", () => sample("picture.bmp")],
    ["tiff", () => tiffBytes()],
    ["ico", () => sample("icon.ico")],
    ["heic", () => heicHeader(10, 10)],
    ["avif", () => sample("sample.avif")],
    ["avif", () => heicHeader(10, 10, "avif")],
    ["svg", () => sample("drawing.svg")],
    ["svg", () => new TextEncoder().encode("\uFEFF  <!-- made by hand -->\n<svg viewBox='0 0 1 1'/>")],
  ] as const)("sniffs %s", (format, bytes) => {
    expect(sniffFormat(bytes())).toBe(format);
  });

  it.each([
    ["text", new TextEncoder().encode("hello world, not an image")],
    ["XML that is not SVG", new TextEncoder().encode('<?xml version="1.0"?><config/>')],
    ["BM followed by text", new TextEncoder().encode("BMW owners manual, chapter one")],
    ["a zip", Uint8Array.from([0x50, 0x4b, 3, 4, 20, 0, 0, 0, 8, 0])],
    ["nothing", new Uint8Array(0)],
  ] as const)("does not take %s for an image", (_case, bytes) => {
    expect(sniffFormat(bytes)).toBeUndefined();
  });

  it("reads sizes from headers without decoding", () => {
    expect(readHeader("webp", sample("photo.webp"))).toMatchObject({ width: 1400, height: 1000 });
    expect(readHeader("webp", sample("alpha.webp"))).toMatchObject({ width: 400, height: 300 });
    expect(readHeader("bmp", sample("picture.bmp"))).toMatchObject({ width: 300, height: 120 });
    expect(readHeader("heic", heicHeader(4032, 3024))).toMatchObject({ width: 4032, height: 3024 });
    expect(readHeader("jpeg", sample("rotated.jpg"))).toMatchObject({ width: 1200, height: 800, orientation: 6 });
    expect(readHeader("jpeg", sample("progressive.jpg"))).toMatchObject({ progressive: true });
  });
});

describe("resizing", () => {
  it("keeps the aspect ratio, never upscales, and keeps transparent pixels from bleeding", () => {
    expect(fitWithin(4032, 3024, 1000)).toEqual({ width: 1000, height: 750 });
    expect(fitWithin(3024, 4032, 256)).toEqual({ width: 192, height: 256 });
    expect(fitWithin(800, 600, 1000)).toEqual({ width: 800, height: 600 });
    expect(fitWithin(10000, 3, 256)).toEqual({ width: 256, height: 1 });
    // Half opaque white, half fully transparent "red": the edge must not turn pink.
    const data = new Uint8Array(8 * 2 * 4);
    for (let i = 0; i < 16; i++) data.set(i % 8 < 4 ? [255, 255, 255, 255] : [255, 0, 0, 0], i * 4);
    const out = resize({ width: 8, height: 2, channels: 4, data }, 4, 1);
    expect([...out.data.subarray(4, 8)].slice(0, 3)).toEqual([255, 255, 255]);
  });
});

describe("colour: photos with an ICC profile", () => {
  // p3.jpg: test/fixtures/generate.mjs's scene converted to Display P3 by libvips, with the profile.
  const at = (image: { width: number; data: Uint8Array; channels: number }, x: number, y: number) =>
    Array.from(image.data.subarray((y * image.width + x) * image.channels, (y * image.width + x) * image.channels + 3));

  it("reads the Display P3 profile of a phone photo", () => {
    const profile = readJpegIcc(sample("p3.jpg"));
    expect(profile).not.toBeNull();
    expect(srgbTransform(profile!)?.name).toMatch(/P3/);
    expect(readJpegIcc(sample("photo.jpg"))).toBeNull();
  });

  it("converts the versions to sRGB: a saturated red comes back as the scene's red, not P3's", async () => {
    const stored = decodeJpeg(sample("p3.jpg"), { blockSize: 8, maxCoefficientBytes: 64 * 1024 * 1024 });
    // In the file the scene's (239, 11, 60) is written in P3 numbers...
    const p3 = at(stored, 1200, 40);
    expect(Math.max(...p3.map((v, i) => Math.abs(v - [239, 11, 60][i]!)))).toBeGreaterThan(15);
    // ...and the Medium version (1000 x 750, no profile) shows it in sRGB again.
    const outcome = await processImage("jpeg", sample("p3.jpg"));
    const medium = outcome.versions.find((v) => v.size === "Medium")!;
    const pixels = decodeJpeg(medium.bytes, { blockSize: 8, maxCoefficientBytes: 64 * 1024 * 1024 });
    at(pixels, Math.round((1200 * 1000) / 1280), Math.round((40 * 750) / 960)).forEach((v, i) =>
      expect(Math.abs(v - [239, 11, 60][i]!), `channel ${i}: ${v}`).toBeLessThanOrEqual(8),
    );
    at(pixels, Math.round((700 * 1000) / 1280), Math.round((900 * 750) / 960)).forEach((v, i) =>
      expect(Math.abs(v - [140, 239, 60][i]!), `channel ${i}: ${v}`).toBeLessThanOrEqual(8),
    );
  });
  it("converts a Display P3 PNG (an iPhone screenshot's profile, in iCCP) the same way", async () => {
    const profile = readPngIcc(sample("p3.png"));
    expect(srgbTransform(profile!)?.name).toMatch(/P3/);
    const outcome = await processImage("png", sample("p3.png"));
    const medium = outcome.versions.find((v) => v.size === "Medium")!;
    expect(medium.contentType).toBe("image/png");
    const pixels = withPhoton((photon) => photon.decode(medium.bytes));
    const px = (x: number, y: number) => Array.from(pixels.data.subarray((y * pixels.width + x) * 4, (y * pixels.width + x) * 4 + 3));
    px(Math.round((1200 * 1000) / 1280), Math.round((40 * 750) / 960)).forEach((v, i) =>
      expect(Math.abs(v - [239, 11, 60][i]!), `channel ${i}: ${v}`).toBeLessThanOrEqual(8),
    );
  });
});

describe("colour: Display P3 in WebP, HEIC, AVIF and TIFF", () => {
  it("nclx code points: wide gamuts are converted, sRGB's primaries and HDR transfers are not", () => {
    expect(nclxTransform(1, 13)).toBeNull();
    expect(nclxTransform(1, 1)).toBeNull();
    expect(nclxTransform(12, 16)).toBeNull(); // PQ
    expect(nclxTransform(2, 13)).toBeNull(); // unspecified
    // P3 (200, 60, 60) is a redder red than sRGB can show at those numbers: (217.5, 41.6, 52.3) in sRGB
    // (P3 to sRGB in linear light: R' = 1.2249 R - 0.2249 G, G' = -0.0421 R + 1.0421 G,
    // B' = -0.0196 R - 0.0786 G + 1.0983 B). Grey stays grey (both are D65).
    const pixels = { width: 2, height: 1, channels: 3 as const, data: new Uint8Array([200, 60, 60, 128, 128, 128]) };
    nclxTransform(12, 13)!.apply(pixels);
    [217.5, 41.6, 52.3, 128, 128, 128].forEach((v, i) =>
      expect(Math.abs(pixels.data[i]! - v), `sample ${i}: ${pixels.data[i]}`).toBeLessThanOrEqual(1),
    );
    const bt2020 = { width: 1, height: 1, channels: 3 as const, data: new Uint8Array([100, 150, 50]) };
    nclxTransform(9, 1)!.apply(bt2020);
    expect(Math.abs(bt2020.data[1]! - 150)).toBeGreaterThan(3);
  });

  // p3.png at half size (640 x 480) in each container: the scene's (239, 11, 60) at (600, 20) is
  // written in P3 numbers; a version made at nearly full size shows it in sRGB again.
  it.each([
    { file: "p3.webp", format: "webp" },
    { file: "p3.heic", format: "heic" },
    { file: "p3.avif", format: "avif" },
    // No profile: Display P3 by nclx code points (primaries 12, transfer 13; see corpus/generate.mjs).
    { file: "p3-nclx.heic", format: "heic" },
    { file: "p3-nclx.avif", format: "avif" },
    { file: "p3.tif", format: "tiff" },
  ] as const)("$file: the version is in sRGB", async ({ file, format }) => {
    const outcome = await processImage(format, sample(file), undefined, { medium: 630, small: 100 });
    const medium = outcome.versions.find((v) => v.size === "Medium")!;
    expect([medium.width, medium.height]).toEqual([630, 473]);
    const pixels =
      medium.contentType === "image/jpeg"
        ? decodeJpeg(medium.bytes, { blockSize: 8, maxCoefficientBytes: 1 << 26 })
        : { ...withPhoton((photon) => photon.decode(medium.bytes)), channels: 4 };
    const at = (x: number, y: number) =>
      Array.from(pixels.data.subarray((y * pixels.width + x) * pixels.channels, (y * pixels.width + x) * pixels.channels + 3));
    at(Math.round((600 * 630) / 640), Math.round((20 * 473) / 480)).forEach((v, i) =>
      expect(Math.abs(v - [239, 11, 60][i]!), `${file} channel ${i}: ${v}`).toBeLessThanOrEqual(10),
    );
  });
});

describe("BMP read row by row", () => {
  /** A BMP of width x height at 8 (grey palette), 24 or 32 bits, or 16 bits with 5-6-5 bit fields. */
  function bmp(
    width: number,
    height: number,
    bits: 8 | 16 | 24 | 32,
    pixel: (x: number, y: number) => [number, number, number],
    topDown = false,
  ): Uint8Array {
    const stride = Math.ceil((width * bits) / 32) * 4;
    const fields = bits === 16 ? 12 : 0;
    const palette = bits === 8 ? 256 * 4 : 0;
    const offset = 54 + fields + palette;
    const out = new Uint8Array(offset + stride * height);
    const v = new DataView(out.buffer);
    out[0] = 0x42;
    out[1] = 0x4d;
    v.setUint32(2, out.length, true);
    v.setUint32(10, offset, true);
    v.setUint32(14, 40, true);
    v.setInt32(18, width, true);
    v.setInt32(22, topDown ? -height : height, true);
    v.setUint16(26, 1, true);
    v.setUint16(28, bits, true);
    v.setUint32(30, bits === 16 ? 3 : 0, true);
    if (bits === 16) {
      v.setUint32(54, 0xf800, true);
      v.setUint32(58, 0x07e0, true);
      v.setUint32(62, 0x001f, true);
    }
    if (bits === 8) for (let i = 0; i < 256; i++) out.set([i, i, i, 0], 54 + i * 4);
    for (let y = 0; y < height; y++) {
      const row = offset + (topDown ? y : height - 1 - y) * stride;
      for (let x = 0; x < width; x++) {
        const [r, g, b] = pixel(x, y);
        if (bits === 8) out[row + x] = r;
        else if (bits === 16) v.setUint16(row + x * 2, ((r >> 3) << 11) | ((g >> 2) << 5) | (b >> 3), true);
        else out.set(bits === 24 ? [b, g, r] : [b, g, r, 0], row + x * (bits / 8));
      }
    }
    return out;
  }
  const scene = (x: number, y: number): [number, number, number] => [(x * 7) & 255, (y * 5) & 255, ((x + y) * 3) & 255];

  it.each([
    ["the 24-bit fixture", () => sample("picture.bmp")],
    ["an 8-bit palette BMP", () => bmp(37, 23, 8, (x, y) => [(x * 6 + y) & 255, 0, 0])],
    ["a 16-bit 5-6-5 bit-field BMP", () => bmp(37, 23, 16, scene)],
    ["a 32-bit BMP (no alpha)", () => bmp(37, 23, 32, scene)],
    ["a top-down 24-bit BMP", () => bmp(37, 23, 24, scene, true)],
  ])("%s decodes to photon's pixels", async (_name, bytes) => {
    const ours = await decodeBmpReduced(bytes(), 1);
    const theirs = withPhoton((photon) => photon.decode(bytes()));
    expect([ours.width, ours.height]).toEqual([theirs.width, theirs.height]);
    let worst = 0;
    for (let i = 0; i < ours.data.length; i++) worst = Math.max(worst, Math.abs(ours.data[i]! - theirs.data[i]!));
    // 5-6-5 channels scale to 8 bits by rounding here, by bit replication in photon: within 4.
    expect(worst).toBeLessThanOrEqual(4);
  });

  it("a 2400 x 1800 BMP is read row by row into Medium and Small", async () => {
    const outcome = await processImage("bmp", bmp(2400, 1800, 24, scene));
    expect(outcome.integrity, outcome.detail ?? "").toBe("passed");
    expect(outcome.versions.map((v) => [v.size, v.width, v.height])).toEqual([
      ["Medium", 1000, 750],
      ["Small", 256, 192],
    ]);
  });

  it("a BMP whose pixel data ends early fails its integrity check", async () => {
    const outcome = await processImage("bmp", bmp(64, 64, 24, scene).subarray(0, 2000));
    expect(outcome).toMatchObject({ integrity: "failed", versions: [] });
    expect(outcome.detail).toMatch(/ends early/);
  });

  /** A run-length encoded BMP (RLE8 or RLE4) of the given commands, with `colours` palette entries (i -> (10 i, 255 - 10 i, 100)). */
  function rleBmp(width: number, height: number, bits: 4 | 8, colours: number, commands: number[]): Uint8Array {
    const offset = 54 + colours * 4;
    const out = new Uint8Array(offset + commands.length);
    const v = new DataView(out.buffer);
    out.set([0x42, 0x4d]);
    v.setUint32(2, out.length, true);
    v.setUint32(10, offset, true);
    v.setUint32(14, 40, true);
    v.setInt32(18, width, true);
    v.setInt32(22, height, true);
    v.setUint16(26, 1, true);
    v.setUint16(28, bits, true);
    v.setUint32(30, bits === 8 ? 1 : 2, true);
    v.setUint32(46, colours, true);
    for (let i = 0; i < colours; i++) out.set([100, 255 - i * 10, i * 10, 0], 54 + i * 4);
    out.set(commands, offset);
    return out;
  }
  /** Rows top first, a palette index or null (transparent) a pixel, as RGBA. */
  const expectedRgba = (rows: (number | null)[][]) =>
    rows.flat().flatMap((i) => (i === null ? [0, 0, 0, 0] : [i * 10, 255 - i * 10, 100, 255]));
  const alphaWeighted = (data: Uint8Array) => Array.from(data).map((v, i, all) => (all[i - (i % 4) + 3] === 0 ? 0 : v));

  it("reads RLE8: runs, literal runs (padded), a delta that skips pixels and lines, an early end", async () => {
    const file = rleBmp(8, 4, 8, 12, [
      ...[3, 5, 0, 3, 1, 2, 3, 0, 2, 7, 0, 0], // bottom line: 5 5 5, literal 1 2 3 (padded), 7 7
      ...[0, 2, 4, 1], // delta: 4 right, 1 up (the second line stays empty)
      ...[4, 9, 0, 0], // third line from x 4: 9 9 9 9
      ...[0, 1], // end of bitmap: the top line is never written
    ]);
    const pixels = await decodeBmpReduced(file, 1);
    const T = null;
    expect(alphaWeighted(pixels.data)).toEqual(
      expectedRgba([
        [T, T, T, T, T, T, T, T],
        [T, T, T, T, 9, 9, 9, 9],
        [T, T, T, T, T, T, T, T],
        [5, 5, 5, 1, 2, 3, 7, 7],
      ]),
    );
  });

  it("reads RLE4: two indices alternating in a run, nibble literals, a run past the line's end cut there", async () => {
    const file = rleBmp(6, 2, 4, 16, [
      ...[4, 0x12, 0, 3, 0x34, 0x50, 0, 0], // 1 2 1 2, literal 3 4 (5 falls past the line)
      ...[6, 0xab, 0, 0, 0, 1], // 10 11 10 11 10 11
    ]);
    expect(alphaWeighted((await decodeBmpReduced(file, 1)).data)).toEqual(
      expectedRgba([
        [10, 11, 10, 11, 10, 11],
        [1, 2, 1, 2, 3, 4],
      ]),
    );
  });

  it("ImageMagick's RLE8 BMP decodes to photon's pixels, and its bottom-up boxes are the top-down ones", async () => {
    const file = sample("imagemagick-rle8.bmp");
    expect(bmpLayout(file)).toMatchObject({ compression: 1, bits: 8, readable: true });
    const ours = await decodeBmpReduced(file, 1);
    const theirs = withPhoton((photon) => photon.decode(file));
    expect([ours.width, ours.height]).toEqual([160, 120]);
    expect(ours.data.every((v, i) => v === theirs.data[i])).toBe(true);
    const topDown = new BoxReducer(160, 120, 7);
    for (let y = 0; y < 120; y++) topDown.addRow(y, 0, ours.data, y * 160 * 4, 160, 4);
    expect(Array.from((await decodeBmpReduced(file, 7)).data)).toEqual(Array.from(topDown.result().data));
  });

  it(
    "an RLE BMP of 4.3 MP (photon's whole decode stopped at about 3) gets Medium and Small; cut short, it fails and " + "says why",
    async () => {
      const [width, height] = [2400, 1800];
      const commands: number[] = [];
      for (let line = 0; line < height; line++) {
        for (let x = 0; x < width; x += 240) commands.push(240, ((x / 240 + line / 100) | 0) % 12);
        commands.push(0, 0);
      }
      commands.push(0, 1);
      const file = rleBmp(width, height, 8, 12, commands);
      const outcome = await processImage("bmp", file);
      expect(outcome.integrity, outcome.detail ?? "").toBe("passed");
      expect(outcome.versions.map((v) => [v.size, v.width, v.height])).toEqual([
        ["Medium", 1000, 750],
        ["Small", 256, 192],
      ]);
      const cut = await processImage("bmp", file.subarray(0, file.length / 2));
      expect(cut).toMatchObject({ integrity: "failed", versions: [] });
      expect(cut.detail).toMatch(/run-length data ends early \(line \d+ of 1800\)/);
      const badIndex = rleBmp(4, 1, 8, 2, [4, 7, 0, 1]);
      expect((await processImage("bmp", badIndex)).detail).toMatch(/names colour 7; the palette has 2/);
    },
  );

  it("a BMP holding a JPEG is not read, and says so", async () => {
    const file = bmp(8, 8, 24, scene);
    new DataView(file.buffer).setUint32(30, 4, true);
    const outcome = await processImage("bmp", file);
    expect(outcome).toMatchObject({ integrity: "notChecked", versions: [] });
    expect(outcome.detail).toMatch(/holds a JPEG/);
  });
});
