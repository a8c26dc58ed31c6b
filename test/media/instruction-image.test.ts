import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { InstructionImageSchema } from "../../src/media/schema";
import { ALL_PERMISSIONS, PERMISSIONS } from "../../src/pkg/permissions";
import { createPropertyDefinition } from "../support/factories/properties";
import { call } from "../support/http";
import { sample } from "./support/media";

const base64 = (bytes: Uint8Array) => {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
};
const path = (id: string) => `/PropertyDefinitions/${id}/InstructionImage`;
const keyOf = async (id: string) =>
  (
    await env.DB.prepare("SELECT instruction_image_key AS key FROM property_definitions WHERE id = ?1")
      .bind(id)
      .first<{ key: string | null }>()
  )?.key ?? null;

describe("PUT and GET /PropertyDefinitions/{id}/InstructionImage", () => {
  it("stores the image and returns it as base64 with its ETag", async () => {
    const definition = await createPropertyDefinition();
    const image = sample("photo.webp");
    const put = await call(path(definition.id), { method: "PUT", body: { image: base64(image) } });
    expect(put.status).toBe(204);
    const etag = put.headers.get("etag");
    expect(etag).toMatch(/^"[0-9a-f-]{36}"$/);

    const got = await call(path(definition.id));
    expect(got.status).toBe(200);
    expect(InstructionImageSchema.parse(got.body)).toEqual({ image: base64(image), contentType: "image/webp" });
    expect(got.headers.get("etag")).toBe(etag);
    expect((await call(path(definition.id), { headers: { "if-none-match": etag! } })).status).toBe(304);
  });

  it("marks the definition, changes its ETag and writes its updated event in the same batch", async () => {
    const definition = await createPropertyDefinition();
    await call(path(definition.id), { method: "PUT", body: { image: base64(sample("grey.jpg")), contentType: "image/jpeg" } });
    const res = await call(`/PropertyDefinitions/${definition.id}`);
    expect(res.body.hasInstructionImage).toBe(true);
    expect(res.headers.get("etag")).not.toBe(definition.etag);
    const event = await env.DB.prepare(
      "SELECT payload FROM outbox WHERE entity_kind = 'propertyDefinition' AND entity_id = ?1 AND action = 'updated'",
    )
      .bind(definition.id)
      .first<{ payload: string }>();
    expect(JSON.parse(event!.payload)).toMatchObject({ id: definition.id, hasInstructionImage: true });
  });

  it("replaces the image and removes the old object", async () => {
    const definition = await createPropertyDefinition();
    await call(path(definition.id), { method: "PUT", body: { image: base64(sample("grey.jpg")) } });
    const first = await keyOf(definition.id);
    const put = await call(path(definition.id), { method: "PUT", body: { image: `data:image/png;base64,${base64(sample("alpha.png"))}` } });
    expect(put.status).toBe(204);
    const second = await keyOf(definition.id);
    expect(second).not.toBe(first);
    expect(await env.MEDIA.head(first!)).toBeNull();
    expect((await call(path(definition.id))).body.contentType).toBe("image/png");
  });

  it("honours If-Match with the image's ETag", async () => {
    const definition = await createPropertyDefinition();
    const put = await call(path(definition.id), { method: "PUT", body: { image: base64(sample("grey.jpg")) } });
    const body = { image: base64(sample("chroma444.jpg")) };
    expect((await call(path(definition.id), { method: "PUT", body, headers: { "if-match": '"stale"' } })).status).toBe(412);
    expect((await call(path(definition.id), { method: "PUT", body, headers: { "if-match": put.headers.get("etag")! } })).status).toBe(204);
  });

  it("removes the image with DELETE", async () => {
    const definition = await createPropertyDefinition();
    await call(path(definition.id), { method: "PUT", body: { image: base64(sample("grey.jpg")) } });
    const key = await keyOf(definition.id);
    expect((await call(path(definition.id), { method: "DELETE" })).status).toBe(204);
    expect(await keyOf(definition.id)).toBeNull();
    expect(await env.MEDIA.head(key!)).toBeNull();
    expect((await call(`/PropertyDefinitions/${definition.id}`)).body.hasInstructionImage).toBe(false);
    expect((await call(path(definition.id), { method: "DELETE" })).status).toBe(404);
  });

  it("answers 404 when the definition has no image, or does not exist", async () => {
    const definition = await createPropertyDefinition();
    const none = await call(path(definition.id));
    expect(none.status).toBe(404);
    expect(none.body.detail).toMatch(/no instruction image/);
    expect((await call(path(crypto.randomUUID()))).status).toBe(404);
    expect((await call(path(crypto.randomUUID()), { method: "PUT", body: { image: base64(sample("grey.jpg")) } })).status).toBe(404);
  });

  const jpeg = sample("photo.jpg");
  describe.each([
    { case: "not base64", body: { image: "%%%not base64%%%" }, field: "body.image", rule: "base64" },
    {
      case: "not an image",
      body: { image: base64(new TextEncoder().encode("plain text, not an image")) },
      field: "body.image",
      rule: "magicBytes",
    },
    { case: "a corrupt image", body: { image: base64(jpeg.subarray(0, jpeg.length / 2)) }, field: "body.image", rule: "integrity" },
    {
      case: "a non-image contentType",
      body: { image: base64(sample("grey.jpg")), contentType: "text/plain" },
      field: "body.contentType",
      rule: "mimeType",
    },
    { case: "an empty image", body: { image: "" }, field: "body.image", rule: "too_small" },
    { case: "an unknown field", body: { image: base64(sample("grey.jpg")), name: "x" }, field: "body", rule: "unrecognized_keys" },
  ])("rejects $case with 400", ({ body, field, rule }) => {
    it("names the field and the check", async () => {
      const definition = await createPropertyDefinition();
      const res = await call(path(definition.id), { method: "PUT", body });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: "ValidationFailed", errors: [{ field, rule }] });
      expect(await keyOf(definition.id)).toBeNull();
    });
  });

  it("rejects an image over 5 MiB with 413", async () => {
    const definition = await createPropertyDefinition();
    const big = new Uint8Array(5 * 1024 * 1024 + 1);
    big.set(sample("grey.jpg"));
    const res = await call(path(definition.id), { method: "PUT", body: { image: base64(big) } });
    expect(res.status).toBe(413);
  });

  it("needs properties_write to set and properties_read to read", async () => {
    const definition = await createPropertyDefinition();
    const noWrite = ALL_PERMISSIONS.filter((p) => p !== PERMISSIONS.propertiesWrite);
    expect(
      (await call(path(definition.id), { method: "PUT", body: { image: base64(sample("grey.jpg")) }, user: { permissions: noWrite } }))
        .status,
    ).toBe(403);
    const noRead = ALL_PERMISSIONS.filter((p) => p !== PERMISSIONS.propertiesRead);
    expect((await call(path(definition.id), { user: { permissions: noRead } })).status).toBe(403);
    expect((await call(path(definition.id), { anonymous: true })).status).toBe(401);
  });
});
