/**
 * Where a photo was taken (issue 11, privacy): the original keeps its EXIF unless StripLocation=true
 * asks to remove the GPS position; Medium and Small never carry EXIF.
 */
import { describe, expect, it } from "vitest";
import { hasLocation, stripLocation } from "../../src/media/image/location";
import { call } from "../support/http";
import { fetchData as getData, sample, uploadForm, uploadMedia } from "./support/media";

const text = (bytes: Uint8Array) => new TextDecoder("latin1").decode(bytes);

function form(name: string, bytes: Uint8Array, mimeType: string, strip?: string, type = "image") {
  const f = uploadForm(bytes, { name, mimeType, type });
  if (strip !== undefined) f.append("StripLocation", strip);
  return f;
}

describe("location in uploaded photos", () => {
  it("a JPEG keeps its position by default, and says so; Medium and Small carry no EXIF", async () => {
    const bytes = sample("gps.jpg");
    expect(hasLocation("jpeg", bytes)).toBe(true);
    const media = await uploadMedia(bytes, { name: "finding.jpg", mimeType: "image/jpeg" });
    expect(media.recognition.location).toBe("kept");
    const original = await getData(media.id);
    expect(hasLocation("jpeg", original.bytes)).toBe(true);
    for (const size of ["Medium", "Small"]) {
      const version = await getData(media.id, `?size=${size}`);
      expect(version.status).toBe(200);
      expect(text(version.bytes)).not.toContain("Exif\u0000\u0000");
    }
  });

  it("StripLocation=true removes the GPS position from a JPEG original and keeps the rest", async () => {
    const bytes = sample("gps.jpg");
    const res = await call("/Medias", { method: "POST", rawBody: form("finding.jpg", bytes, "image/jpeg", "true") });
    expect(res.status, res.text).toBe(201);
    expect(res.body.recognition).toMatchObject({ location: "removed", integrity: "passed" });
    const original = await getData(res.body.id);
    expect(hasLocation("jpeg", original.bytes)).toBe(false);
    // The camera's make and the image are still there; the stored bytes are what the checksum names.
    expect(text(original.bytes)).toContain("TestPhone");
    expect(original.bytes.length).toBe(res.body.size);
    const digest = [...new Uint8Array(await crypto.subtle.digest("SHA-256", original.bytes))]
      .map((b) => b.toString(16).padStart(2, "0"))
      .join("");
    expect(digest).toBe(res.body.checksum);
    expect(res.body.sizes.map((s: { name: string }) => s.name)).toEqual(["Original", "Medium", "Small"]);
  });

  it("StripLocation=true removes a PNG's eXIf chunk, also from a photo uploaded as a document", async () => {
    const png = await call("/Medias", { method: "POST", rawBody: form("screen.png", sample("gps.png"), "image/png", "TRUE") });
    expect(png.status, png.text).toBe(201);
    expect(png.body.recognition.location).toBe("removed");
    const stored = await getData(png.body.id);
    expect(text(stored.bytes)).not.toContain("eXIf");
    expect(hasLocation("png", stored.bytes)).toBe(false);
    const doc = await call("/Medias", {
      method: "POST",
      rawBody: form("report.bin", sample("gps.jpg"), "application/octet-stream", "true", "document"),
    });
    expect(doc.status, doc.text).toBe(201);
    expect(doc.body.isImage).toBe(false);
    expect(doc.body.recognition.location).toBe("removed");
    expect(hasLocation("jpeg", (await getData(doc.body.id)).bytes)).toBe(false);
  });

  it.each([
    { format: "webp", file: "gps.webp", mime: "image/webp", sameLength: true },
    { format: "heic", file: "gps.heic", mime: "image/heic", sameLength: true },
    { format: "avif", file: "gps.avif", mime: "image/avif", sameLength: true },
  ] as const)(
    "StripLocation=true empties the GPS directory of a $format's EXIF in place; the picture still decodes",
    async ({ format, file, mime, sameLength }) => {
      const bytes = sample(file);
      expect(hasLocation(format, bytes)).toBe(true);
      const kept = await uploadMedia(bytes, { name: file, mimeType: mime });
      expect(kept.recognition.location).toBe("kept");
      const res = await call("/Medias", { method: "POST", rawBody: form(file, bytes, mime, "true") });
      expect(res.status, res.text).toBe(201);
      expect(res.body.recognition).toMatchObject({ location: "removed", integrity: kept.recognition.integrity });
      const stored = (await getData(res.body.id)).bytes;
      expect(hasLocation(format, stored)).toBe(false);
      expect(text(stored)).toContain("TestPhone");
      if (sameLength) expect(stored.length).toBe(bytes.length);
    },
  );

  it("a WebP's XMP chunk naming a position is dropped, the RIFF size and the VP8X flags follow", async () => {
    const webp = withXmp(
      sample("gps.webp"),
      '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF><rdf:Description exif:GPSLatitude="59,54.5N" ' +
        'exif:GPSLongitude="10,44.2E"/></rdf:RDF></x:xmpmeta>',
    );
    expect(hasLocation("webp", webp)).toBe(true);
    const res = await call("/Medias", { method: "POST", rawBody: form("xmp.webp", webp, "image/webp", "true") });
    expect(res.status, res.text).toBe(201);
    expect(res.body.recognition).toMatchObject({ location: "removed", integrity: "passed" });
    const stored = (await getData(res.body.id)).bytes;
    expect(text(stored)).not.toContain("GPSLatitude");
    const view = new DataView(stored.buffer, stored.byteOffset);
    expect(view.getUint32(4, true)).toBe(stored.length - 8);
    expect(stored[20]! & 0x04).toBe(0);
  });

  it("a HEIF's XMP item naming a position is overwritten by an empty packet of the same length", () => {
    const heic = heifWithXmp(
      '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF><rdf:Description exif:GPSLatitude="59,54.5N" ' +
        'exif:GPSLongitude="10,44.2E"/></rdf:RDF></x:xmpmeta>',
    );
    expect(hasLocation("heic", heic)).toBe(true);
    const stripped = stripLocation("heic", heic);
    expect(stripped.removed).toBe(true);
    expect(stripped.bytes.length).toBe(heic.length);
    expect(text(stripped.bytes)).not.toContain("GPSLatitude");
    expect(text(stripped.bytes)).toContain('<?xpacket end="w"?>');
    expect(hasLocation("heic", stripped.bytes)).toBe(false);
  });

  it("says none for a photo without a position, and checks the field", async () => {
    const plain = await call("/Medias", { method: "POST", rawBody: form("plain.jpg", sample("photo.jpg"), "image/jpeg", "true") });
    expect(plain.body.recognition.location).toBe("none");
    const gif = await call("/Medias", { method: "POST", rawBody: form("picture.gif", sample("picture.gif"), "image/gif", "true") });
    expect(gif.body.recognition.location).toBe("none");
    const bad = await call("/Medias", { method: "POST", rawBody: form("plain.jpg", sample("photo.jpg"), "image/jpeg", "maybe") });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatchObject({ field: "body.StripLocation", rule: "boolean" });
  });
});

/** The WebP with an XMP chunk appended (RIFF size and the VP8X XMP flag set). */
function withXmp(webp: Uint8Array, xmp: string): Uint8Array {
  const body = new TextEncoder().encode(xmp);
  const chunk = new Uint8Array(8 + body.length + (body.length & 1));
  chunk.set(new TextEncoder().encode("XMP "), 0);
  new DataView(chunk.buffer).setUint32(4, body.length, true);
  chunk.set(body, 8);
  const out = new Uint8Array(webp.length + chunk.length);
  out.set(webp, 0);
  out.set(chunk, webp.length);
  new DataView(out.buffer).setUint32(4, out.length - 8, true);
  expect(text(out.subarray(12, 16))).toBe("VP8X");
  out[20] = out[20]! | 0x04;
  return out;
}

/** A minimal HEIF whose only item is an XMP packet (a mime item of type application/rdf+xml, in mdat). */
function heifWithXmp(xmp: string): Uint8Array {
  const enc = (v: string) => [...new TextEncoder().encode(v)];
  const u32 = (v: number) => [v >>> 24, (v >> 16) & 255, (v >> 8) & 255, v & 255];
  const u16 = (v: number) => [v >> 8, v & 255];
  const box = (type: string, body: number[]) => [...u32(body.length + 8), ...enc(type), ...body];
  const full = (type: string, version: number, body: number[]) => box(type, [version, 0, 0, 0, ...body]);
  const packet = enc(xmp);
  const ftyp = box("ftyp", [...enc("heic"), 0, 0, 0, 0, ...enc("mif1heic")]);
  const infe = full("infe", 2, [...u16(1), ...u16(0), ...enc("mime"), 0, ...enc("application/rdf+xml"), 0]);
  const iinf = full("iinf", 0, [...u16(1), ...infe]);
  const iloc = (offset: number) =>
    full("iloc", 0, [0x44, 0x00, ...u16(1), ...u16(1), ...u16(0), ...u16(1), ...u32(offset), ...u32(packet.length)]);
  const meta = (offset: number) => full("meta", 0, [...iinf, ...iloc(offset)]);
  const offset = ftyp.length + meta(0).length + 8;
  return Uint8Array.from([...ftyp, ...meta(offset), ...box("mdat", packet)]);
}
