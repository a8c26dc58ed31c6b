import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { Media } from "../../src/media/schema";
import { ALL_PERMISSIONS, PERMISSIONS } from "../../src/pkg/permissions";
import { heicHeader, fetchData, sample, uploadMedia } from "./support/media";

const IMMUTABLE = "private, max-age=31536000, immutable";
const SANDBOX = "sandbox; default-src 'none'";

let photo: Media;
let small: Media;
let corrupt: Media;
let heic: Media;
let svg: Media;
let document: Media;

beforeAll(async () => {
  photo = await uploadMedia(sample("photo.jpg"), { name: "site photo.jpg", mimeType: "image/jpeg" });
  small = await uploadMedia(sample("chroma444.jpg"), { name: "valve.jpg", mimeType: "image/jpeg" });
  const jpeg = sample("photo.jpg");
  corrupt = await uploadMedia(jpeg.subarray(0, jpeg.length - 5000), { name: "cut.jpg", mimeType: "image/jpeg" });
  heic = await uploadMedia(heicHeader(4032, 3024), { name: "IMG_1.heic", mimeType: "image/heic" });
  svg = await uploadMedia(sample("drawing.svg"), { name: "drawing.svg", mimeType: "image/svg+xml" });
  document = await uploadMedia(new TextEncoder().encode("report"), { name: "report.txt", mimeType: "text/plain", type: "document" });
});

describe("GET /Medias/{id}/Data", () => {
  it("serves the original by default, with its type, ETag and immutable caching", async () => {
    const res = await fetchData(photo.id);
    expect(res.status).toBe(200);
    expect(res.bytes).toEqual(sample("photo.jpg"));
    expect(
      Object.fromEntries(
        [
          "content-type",
          "content-length",
          "cache-control",
          "accept-ranges",
          "x-content-type-options",
          "content-security-policy",
          "x-media-size",
        ].map((h) => [h, res.headers.get(h)]),
      ),
    ).toEqual({
      "content-type": "image/jpeg",
      "content-length": String(sample("photo.jpg").length),
      "cache-control": IMMUTABLE,
      "accept-ranges": "bytes",
      "x-content-type-options": "nosniff",
      "content-security-policy": SANDBOX,
      "x-media-size": "Original",
    });
    expect(res.headers.get("etag")).toMatch(/^"[0-9a-f]{32}"$/);
    expect(res.headers.get("x-media-size-fallback")).toBeNull();
    expect(res.headers.get("content-disposition")).toBe(`inline; filename="site photo.jpg"; filename*=UTF-8''site%20photo.jpg`);
  });

  it.each([
    { size: "Medium", width: 1000 },
    { size: "small", width: 256 },
    { size: "ORIGINAL", width: 1600 },
  ])("serves size=$size (any case)", async ({ size, width }) => {
    const res = await fetchData(photo.id, `?size=${size}`);
    expect(res.status).toBe(200);
    const canonical = size[0]!.toUpperCase() + size.slice(1).toLowerCase();
    expect(res.headers.get("x-media-size")).toBe(canonical);
    const entry = photo.sizes.find((s) => s.name === canonical)!;
    expect(entry.width).toBe(width);
    expect(res.bytes.length).toBe(entry.size);
    expect(res.bytes.subarray(0, 3)).toEqual(Uint8Array.from([0xff, 0xd8, 0xff]));
    if (canonical !== "Original") expect(res.headers.get("content-disposition")).toContain(`site%20photo-${canonical.toLowerCase()}.jpg`);
  });

  it("gives each size its own ETag and answers 304 to If-None-Match", async () => {
    const medium = await fetchData(photo.id, "?size=Medium");
    const smallSize = await fetchData(photo.id, "?size=Small");
    expect(medium.headers.get("etag")).not.toBe(smallSize.headers.get("etag"));
    const again = await fetchData(photo.id, "?size=Medium", { "if-none-match": medium.headers.get("etag")! });
    expect(again.status).toBe(304);
    expect(again.bytes.length).toBe(0);
    expect(again.headers.get("cache-control")).toBe(IMMUTABLE);
  });

  it("serves an image already within a size with its original, without the fallback flag", async () => {
    const res = await fetchData(small.id, "?size=Medium");
    expect(res.status).toBe(200);
    expect(res.bytes).toEqual(sample("chroma444.jpg"));
    expect(res.headers.get("x-media-size")).toBe("Original");
    expect(res.headers.get("x-media-size-fallback")).toBeNull();
  });

  it.each([
    { case: "a corrupt image", media: () => corrupt },
    { case: "a HEIC (kept as uploaded)", media: () => heic },
  ])("answers a size that does not exist for $case with the original and says so", async ({ media }) => {
    const res = await fetchData(media().id, "?size=Small");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-media-size")).toBe("Original");
    expect(res.headers.get("x-media-size-fallback")).toBe("true");
    expect(res.bytes.length).toBe(media().size);
    expect(res.headers.get("content-disposition")).toMatch(/^attachment;/);
  });

  it("never renders SVG inline: attachment, sandboxing CSP, nosniff", async () => {
    const res = await fetchData(svg.id);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/svg+xml");
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="drawing.svg"; filename*=UTF-8''drawing.svg`);
    expect(res.headers.get("content-security-policy")).toBe(SANDBOX);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("serves a document as an attachment with its declared type", async () => {
    const res = await fetchData(document.id);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain");
    expect(res.headers.get("content-disposition")).toMatch(/^attachment;/);
    expect(new TextDecoder().decode(res.bytes)).toBe("report");
  });

  describe("Range", () => {
    const original = () => sample("photo.jpg");
    it.each([
      { range: "bytes=0-99", from: 0, to: 99 },
      { range: "bytes=1000-", from: 1000, to: null },
      { range: "bytes=-500", from: null, to: null },
      { range: "bytes=100-999999999", from: 100, to: null },
    ])("answers $range with 206 and Content-Range", async ({ range, from, to }) => {
      const total = original().length;
      const start = from ?? total - 500;
      const end = to ?? total - 1;
      const res = await fetchData(photo.id, "", { range });
      expect(res.status).toBe(206);
      expect(res.headers.get("content-range")).toBe(`bytes ${start}-${end}/${total}`);
      expect(res.headers.get("content-length")).toBe(String(end - start + 1));
      expect(res.bytes).toEqual(original().subarray(start, end + 1));
    });

    it("answers a range of a resized size", async () => {
      const res = await fetchData(photo.id, "?size=Small", { range: "bytes=0-1" });
      expect(res.status).toBe(206);
      expect(res.bytes).toEqual(Uint8Array.from([0xff, 0xd8]));
      expect(res.headers.get("content-range")).toMatch(/^bytes 0-1\/\d+$/);
    });

    it.each(["bytes=999999999-", "bytes=-0", "BYTES = 999999999-"])(
      "answers the unsatisfiable %s with a 416 problem and Content-Range bytes */size",
      async (range) => {
        const res = await fetchData(photo.id, "", { range });
        expect(res.status).toBe(416);
        expect(res.headers.get("content-range")).toBe(`bytes */${original().length}`);
        expect(res.headers.get("content-type")).toBe("application/problem+json");
        expect(JSON.parse(new TextDecoder().decode(res.bytes))).toMatchObject({
          status: 416,
          code: "RangeNotSatisfiable",
          instance: `/Medias/${photo.id}/Data`,
        });
      },
    );

    it.each(["items=0-5", "bytes=0-5,10-15", "bytes=9-3", "bytes=x"])(
      "ignores a Range it does not serve (%s) and sends everything",
      async (range) => {
        const res = await fetchData(photo.id, "", { range });
        expect(res.status).toBe(200);
        expect(res.bytes.length).toBe(original().length);
      },
    );

    it("honours If-Range: the range while the ETag is current, everything otherwise", async () => {
      const etag = (await fetchData(photo.id)).headers.get("etag")!;
      expect((await fetchData(photo.id, "", { range: "bytes=0-9", "if-range": etag })).status).toBe(206);
      const stale = await fetchData(photo.id, "", { range: "bytes=0-9", "if-range": '"stale"' });
      expect(stale.status).toBe(200);
      expect(stale.bytes.length).toBe(original().length);
    });
  });

  describe.each([
    { case: "size on a non-image", media: () => document, query: "?size=Original", rule: "imagesOnly" },
    { case: "an unknown size", media: () => photo, query: "?size=Large", rule: "enum" },
  ])("rejects $case with 400", ({ media, query, rule }) => {
    it("names query.size", async () => {
      const res = await fetchData(media().id, query);
      expect(res.status).toBe(400);
      expect(JSON.parse(new TextDecoder().decode(res.bytes))).toMatchObject({
        code: "ValidationFailed",
        errors: [{ field: "query.size", rule }],
      });
    });
  });

  it("answers 404 for an unknown media and 400 for a malformed id", async () => {
    expect((await fetchData(crypto.randomUUID())).status).toBe(404);
    expect((await fetchData("not-a-uuid")).status).toBe(400);
  });

  it("needs media_read", async () => {
    const res = await fetchData(photo.id, "", {}, { permissions: ALL_PERMISSIONS.filter((p) => p !== PERMISSIONS.mediaRead) });
    expect(res.status).toBe(403);
  });

  it("answers 404, not the row, when the object is missing", async () => {
    const media = await uploadMedia(sample("grey.jpg"), { name: "grey.jpg", mimeType: "image/jpeg" });
    await env.MEDIA.delete(`media/${media.id}/original`);
    expect((await fetchData(media.id)).status).toBe(404);
  });
});
