/**
 * Where a photo was taken (issue 11, privacy): the original keeps its EXIF unless StripLocation=true
 * asks to remove the GPS position; Medium and Small never carry EXIF.
 */
import { describe, expect, it } from "vitest";
import { hasLocation } from "../../src/media/image/location";
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
    const digest = [...new Uint8Array(await crypto.subtle.digest("SHA-256", original.bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
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
    const doc = await call("/Medias", { method: "POST", rawBody: form("report.bin", sample("gps.jpg"), "application/octet-stream", "true", "document") });
    expect(doc.status, doc.text).toBe(201);
    expect(doc.body.isImage).toBe(false);
    expect(doc.body.recognition.location).toBe("removed");
    expect(hasLocation("jpeg", (await getData(doc.body.id)).bytes)).toBe(false);
  });

  it("says none for a photo without a position, refuses StripLocation where it cannot remove one, and checks the field", async () => {
    const plain = await call("/Medias", { method: "POST", rawBody: form("plain.jpg", sample("photo.jpg"), "image/jpeg", "true") });
    expect(plain.body.recognition.location).toBe("none");
    const webp = await call("/Medias", { method: "POST", rawBody: form("photo.webp", sample("photo.webp"), "image/webp", "true") });
    expect(webp.status).toBe(400);
    expect(webp.body.errors[0]).toMatchObject({ field: "body.StripLocation", rule: "unsupportedFormat" });
    expect((await call("/Medias", { method: "POST", rawBody: form("photo.webp", sample("photo.webp"), "image/webp") })).status).toBe(201);
    const bad = await call("/Medias", { method: "POST", rawBody: form("plain.jpg", sample("photo.jpg"), "image/jpeg", "maybe") });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatchObject({ field: "body.StripLocation", rule: "boolean" });
  });
});
