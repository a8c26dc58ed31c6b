import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ALL_PERMISSIONS, PERMISSIONS } from "../../src/pkg/permissions";
import { call } from "../support/http";
import { heicHeader, postMedia, sample, sizeNames, uploadForm, uploadMedia } from "./support/media";

describe("POST /Medias: images of every decoded format get Medium and Small", () => {
  it.each([
    { file: "photo.jpg", mime: "image/jpeg", width: 1600, height: 1200, medium: [1000, 750], small: [256, 192], variant: "image/jpeg" },
    {
      file: "progressive.jpg",
      mime: "image/jpeg",
      width: 1200,
      height: 900,
      medium: [1000, 750],
      small: [256, 192],
      variant: "image/jpeg",
    },
    { file: "chroma444.jpg", mime: "image/jpeg", width: 640, height: 480, medium: null, small: [256, 192], variant: "image/jpeg" },
    { file: "grey.jpg", mime: "image/jpeg", width: 800, height: 600, medium: null, small: [256, 192], variant: "image/jpeg" },
    { file: "picture.gif", mime: "image/gif", width: 1200, height: 800, medium: [1000, 667], small: [256, 171], variant: "image/png" },
    { file: "photo.webp", mime: "image/webp", width: 1400, height: 1000, medium: [1000, 714], small: [256, 183], variant: "image/jpeg" },
    { file: "alpha.webp", mime: "image/webp", width: 400, height: 300, medium: null, small: [256, 192], variant: "image/png" },
    { file: "picture.bmp", mime: "image/bmp", width: 300, height: 120, medium: null, small: [256, 102], variant: "image/png" },
    { file: "alpha.png", mime: "image/png", width: 1200, height: 900, medium: [1000, 750], small: [256, 192], variant: "image/png" },
  ])("$file", async ({ file, mime, width, height, medium, small, variant }) => {
    const media = await uploadMedia(sample(file), { name: file, mimeType: mime });
    expect(media).toMatchObject({ name: file, type: "image", contentType: mime, isImage: true, width, height, size: sample(file).length });
    expect(media.recognition).toMatchObject({
      extension: "passed",
      mimeType: "passed",
      magicBytes: "passed",
      integrity: "passed",
      failedChecks: [],
    });
    const bySize = Object.fromEntries(media.sizes.map((s) => [s.name, s]));
    expect(bySize.Original).toMatchObject({ width, height, contentType: mime, isOriginal: true });
    if (medium) expect(bySize.Medium).toMatchObject({ width: medium[0], height: medium[1], contentType: variant, isOriginal: false });
    else expect(bySize.Medium).toMatchObject({ width, height, isOriginal: true });
    expect(bySize.Small).toMatchObject({ width: small[0], height: small[1], contentType: variant, isOriginal: false });
  });

  it("gives a 12 MP phone photo (4032x3024) its Medium and Small", async () => {
    const media = await uploadMedia(sample("phone-12mp.jpg"), { name: "IMG_0001.JPG", mimeType: "image/jpeg" });
    expect(media.sizes.map((s) => [s.name, s.width, s.height, s.isOriginal])).toEqual([
      ["Original", 4032, 3024, true],
      ["Medium", 1000, 750, false],
      ["Small", 256, 192, false],
    ]);
  });

  it("turns the resized versions as EXIF orientation says and reports the dimensions as shown", async () => {
    const media = await uploadMedia(sample("rotated.jpg"), { name: "portrait.jpg", mimeType: "image/jpeg" });
    expect([media.width, media.height]).toEqual([800, 1200]);
    expect(media.sizes.find((s) => s.name === "Medium")).toMatchObject({ width: 667, height: 1000 });
    expect(media.sizes.find((s) => s.name === "Small")).toMatchObject({ width: 171, height: 256 });
  });

  it("decodes baseline JPEGs with restart intervals", async () => {
    const media = await uploadMedia(sample("restart.jpg"), { name: "restart.jpg", mimeType: "image/jpeg" });
    expect(media.recognition.integrity).toBe("passed");
    expect(media.sizes.every((s) => s.isOriginal)).toBe(true);
  });

  it("answers with Location, ETag and the stored objects in R2", async () => {
    const res = await postMedia(sample("photo.jpg"), { name: "photo.jpg", mimeType: "image/jpeg" });
    expect(res.status).toBe(201);
    expect(res.headers.get("location")).toBe(`/Medias/${res.body.id}`);
    expect(res.headers.get("etag")).toMatch(/^"[0-9a-f]{20}"$/);
    const listed = await env.MEDIA.list({ prefix: `media/${res.body.id}/` });
    expect(listed.objects.map((o) => o.key).sort()).toEqual([
      `media/${res.body.id}/medium`,
      `media/${res.body.id}/original`,
      `media/${res.body.id}/small`,
    ]);
    const digest = await crypto.subtle.digest("SHA-256", sample("photo.jpg"));
    expect(res.body.checksum).toBe([...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join(""));
  });

  it("writes a created event in the same batch as the row", async () => {
    const media = await uploadMedia(sample("grey.jpg"), { name: "grey.jpg", mimeType: "image/jpeg" });
    const event = await env.DB.prepare("SELECT action, payload FROM outbox WHERE entity_kind = 'media' AND entity_id = ?1")
      .bind(media.id)
      .first<{ action: string; payload: string }>();
    expect(event?.action).toBe("created");
    expect(JSON.parse(event!.payload)).toMatchObject({ id: media.id, sizes: media.sizes });
  });
});

describe("POST /Medias: the form", () => {
  it.each([
    { fileField: "file", typeField: "type", type: "image" },
    { fileField: "FILE", typeField: "TYPE", type: "IMAGE" },
    { fileField: "File", typeField: "Type", type: "Document" },
  ])("accepts $fileField / $typeField = $type", async ({ fileField, typeField, type }) => {
    const media = await uploadMedia(sample("grey.jpg"), { name: "grey.jpg", mimeType: "image/jpeg", fileField, typeField, type });
    expect(media.type).toBe(type.toLowerCase());
    expect(media.isImage).toBe(true);
  });

  it("keeps only the file name of a client path", async () => {
    const media = await uploadMedia(sample("grey.jpg"), { name: "C:\\Users\\inspector\\grey.jpg", mimeType: "image/jpeg" });
    expect(media.name).toBe("grey.jpg");
  });

  const form = (mutate: (f: FormData) => void) => {
    const f = uploadForm(sample("grey.jpg"), { name: "grey.jpg", mimeType: "image/jpeg" });
    mutate(f);
    return f;
  };
  describe.each([
    { case: "no file", body: form((f) => f.delete("File")), field: "body.File", rule: "required" },
    {
      case: "a text value as file",
      body: form((f) => (f.delete("File"), f.append("File", "not a file"))),
      field: "body.File",
      rule: "required",
    },
    { case: "two files", body: form((f) => f.append("File", new File([sample("grey.jpg")], "b.jpg"))), field: "body.File", rule: "single" },
    {
      case: "File and file",
      body: form((f) => f.append("file", new File([sample("grey.jpg")], "b.jpg"))),
      field: "body.File",
      rule: "single",
    },
    {
      case: "an empty file",
      body: form((f) => (f.delete("File"), f.append("File", new File([], "empty.jpg")))),
      field: "body.File",
      rule: "notEmpty",
    },
    { case: "no type", body: form((f) => f.delete("Type")), field: "body.Type", rule: "required" },
    { case: "another type", body: form((f) => f.set("Type", "video")), field: "body.Type", rule: "enum" },
  ])("rejects $case with 400", ({ body, field, rule }) => {
    it("names the field", async () => {
      const res = await call("/Medias", { method: "POST", rawBody: body });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: "ValidationFailed", errors: [{ field, rule }] });
    });
  });

  it("rejects a JSON body with 415", async () => {
    const res = await call("/Medias", { method: "POST", body: { File: "x", Type: "image" } });
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({ code: "UnsupportedMediaType" });
  });

  it("rejects a body over 20 MiB with 413 before reading it", async () => {
    const res = await call("/Medias", {
      method: "POST",
      rawBody: "x",
      headers: { "content-type": "multipart/form-data; boundary=x", "content-length": String(21 * 1024 * 1024) },
    });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: "PayloadTooLarge" });
  });

  it("rejects a request without a token with 401 and without media_write with 403", async () => {
    expect((await postMedia(sample("grey.jpg"), { anonymous: true })).status).toBe(401);
    const res = await postMedia(sample("grey.jpg"), { user: { permissions: ALL_PERMISSIONS.filter((p) => p !== PERMISSIONS.mediaWrite) } });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: "Forbidden" });
  });

  it("replays the answer for a repeated Idempotency-Key instead of storing the file twice", async () => {
    // A retry sends the same bytes: serialise the form once (FormData picks a new boundary each time).
    const encoded = new Request("https://x.test", {
      method: "POST",
      body: uploadForm(sample("grey.jpg"), { name: "grey.jpg", mimeType: "image/jpeg" }),
    });
    const headers = { "idempotency-key": `media-${crypto.randomUUID()}`, "content-type": encoded.headers.get("content-type")! };
    const body = new Uint8Array(await encoded.arrayBuffer());
    const first = await call("/Medias", { method: "POST", rawBody: body, headers });
    const second = await call("/Medias", { method: "POST", rawBody: body, headers });
    expect(second.status).toBe(201);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.body.id).toBe(first.body.id);
  });
});

describe("POST /Medias: the four checks", () => {
  it("stores a non-image as a document and records which checks failed", async () => {
    const text = new TextEncoder().encode("inspection notes\n");
    const media = await uploadMedia(text, { name: "notes.txt", mimeType: "text/plain", type: "document" });
    expect(media).toMatchObject({ isImage: false, contentType: "text/plain", width: null, height: null });
    expect(media.recognition).toMatchObject({
      extension: "failed",
      mimeType: "failed",
      magicBytes: "failed",
      integrity: "notChecked",
      detectedFormat: null,
    });
    expect(media.recognition.failedChecks).toEqual(["extension", "mimeType", "magicBytes"]);
    expect(sizeNames(media)).toEqual(["Original"]);
  });

  it("catches a non-image named .jpg by its magic bytes", async () => {
    const pdf = new TextEncoder().encode("%PDF-1.7\n1 0 obj\n<<>>\nendobj\n");
    const media = await uploadMedia(pdf, { name: "photo.jpg", mimeType: "image/jpeg" });
    expect(media.isImage).toBe(false);
    expect(media.recognition.failedChecks).toEqual(["magicBytes"]);
    // It claimed to be an image it is not: served as opaque bytes.
    expect(media.contentType).toBe("application/octet-stream");
  });

  it("treats a PNG named .jpg as the PNG it is", async () => {
    const png = sample("alpha.png");
    const media = await uploadMedia(png, { name: "photo.jpg", mimeType: "image/jpeg" });
    expect(media).toMatchObject({ isImage: true, contentType: "image/png", width: 1200, height: 900 });
    expect(media.recognition).toMatchObject({ detectedFormat: "png", failedChecks: [], integrity: "passed" });
  });

  it("catches a JPEG renamed to .txt: not an image, but its detected format says what it is", async () => {
    const media = await uploadMedia(sample("photo.jpg"), { name: "photo.txt", mimeType: "text/plain", type: "document" });
    expect(media.isImage).toBe(false);
    expect(media.recognition).toMatchObject({ detectedFormat: "jpeg", failedChecks: ["extension", "mimeType"] });
    expect(sizeNames(media)).toEqual(["Original"]);
  });

  it.each([
    { case: "a declared MIME type outside the list", name: "photo.jpg", mime: "application/octet-stream", failed: ["mimeType"] },
    { case: "an extension outside the list", name: "photo.jfif", mime: "image/jpeg", failed: ["extension"] },
    { case: "no extension", name: "photo", mime: "image/jpeg", failed: ["extension"] },
  ])("is not an image with $case", async ({ name, mime, failed }) => {
    const media = await uploadMedia(sample("photo.jpg"), { name, mimeType: mime });
    expect(media.isImage).toBe(false);
    expect(media.recognition.failedChecks).toEqual(failed);
  });

  it.each([
    { name: "photo.JPEG", mime: "image/JPEG" },
    { name: "photo.jpg", mime: "image/jpg" },
    { name: "photo.jpg", mime: "image/jpeg; charset=binary" },
  ])("accepts $name as $mime", async ({ name, mime }) => {
    const media = await uploadMedia(sample("grey.jpg"), { name, mimeType: mime });
    expect(media.isImage).toBe(true);
  });

  it("keeps a truncated JPEG's original: integrity failed, no resized versions, still 201", async () => {
    const jpeg = sample("photo.jpg");
    const media = await uploadMedia(jpeg.subarray(0, Math.floor(jpeg.length * 0.6)), { name: "cut.jpg", mimeType: "image/jpeg" });
    expect(media).toMatchObject({ isImage: true, width: 1600, height: 1200 });
    expect(media.recognition).toMatchObject({ integrity: "failed", failedChecks: ["integrity"] });
    expect(media.recognition.detail).toMatch(/truncated|ends/);
    expect(sizeNames(media)).toEqual(["Original"]);
  });

  it("keeps a JPEG with bytes overwritten in its image data without resized versions", async () => {
    const jpeg = sample("photo.jpg").slice();
    for (let i = 2000; i < 2400; i++) jpeg[i] = 0xff;
    const media = await uploadMedia(jpeg, { name: "tampered.jpg", mimeType: "image/jpeg" });
    expect(media.recognition.integrity).toBe("failed");
    expect(sizeNames(media)).toEqual(["Original"]);
  });

  it("keeps a corrupt WebP's original (photon traps; the next image still resizes)", async () => {
    const webp = sample("photo.webp").slice();
    for (let i = 40; i < webp.length; i += 7) webp[i] = webp[i]! ^ 0x5a;
    const media = await uploadMedia(webp, { name: "broken.webp", mimeType: "image/webp" });
    expect(media.recognition.integrity).toBe("failed");
    expect(sizeNames(media)).toEqual(["Original"]);
    const next = await uploadMedia(sample("picture.gif"), { name: "next.gif", mimeType: "image/gif" });
    expect(sizeNames(next)).toEqual(["Original", "Medium", "Small"]);
  });
});

describe("POST /Medias: formats kept as uploaded", () => {
  it.each([
    { case: "ICO", bytes: () => sample("icon.ico"), name: "favicon.ico", mime: "image/x-icon", format: "ico", size: [32, 32] },
    { case: "SVG", bytes: () => sample("drawing.svg"), name: "drawing.svg", mime: "image/svg+xml", format: "svg", size: [null, null] },
  ])("$case: recognised as an image, original only, integrity not checked", async ({ bytes, name, mime, format, size }) => {
    const media = await uploadMedia(bytes(), { name, mimeType: mime });
    expect(media).toMatchObject({ isImage: true, width: size[0], height: size[1] });
    expect(media.recognition).toMatchObject({ detectedFormat: format, integrity: "notChecked", failedChecks: [] });
    expect(media.recognition.detail).toBeTruthy();
    expect(sizeNames(media)).toEqual(["Original"]);
  });

  it("a HEIC with a header but no picture keeps its original and says the check failed", async () => {
    const media = await uploadMedia(heicHeader(4032, 3024), { name: "IMG_0001.HEIC", mimeType: "image/heic" });
    expect(media).toMatchObject({ isImage: true, width: 4032, height: 3024 });
    expect(media.recognition).toMatchObject({ detectedFormat: "heic", integrity: "failed" });
    expect(media.recognition.detail).toMatch(/HEIF file could not be decoded/);
    expect(sizeNames(media)).toEqual(["Original"]);
  });

  it("a CMYK JPEG (Adobe) is decoded, checked and resized like any JPEG", async () => {
    const media = await uploadMedia(sample("cmyk.jpg"), { name: "print.jpg", mimeType: "image/jpeg" });
    expect(media).toMatchObject({ isImage: true, width: 320, height: 240 });
    expect(media.recognition).toMatchObject({ detectedFormat: "jpeg", integrity: "passed", failedChecks: [] });
    expect(media.sizes.map((s) => [s.name, s.width, s.height, s.isOriginal])).toEqual([
      ["Original", 320, 240, true],
      ["Medium", 320, 240, true],
      ["Small", 256, 192, false],
    ]);
  });
});
