import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MediaSchema } from "../../src/media/schema";
import { PERMISSIONS } from "../../src/pkg/permissions";
import { call } from "../support/http";
import { postMedia, sample, uploadMedia } from "./support/media";

const owner = { id: "00000000-0000-4000-8000-0000000000a1", name: "Owner", permissions: [PERMISSIONS.mediaRead, PERMISSIONS.mediaWrite] };
const reader = { id: "00000000-0000-4000-8000-0000000000b2", name: "Reader", permissions: [PERMISSIONS.mediaRead] };
const editor = { id: "00000000-0000-4000-8000-0000000000c3", name: "Editor", permissions: [PERMISSIONS.mediaRead, PERMISSIONS.mediaWrite] };

async function objectKeys(id: string): Promise<string[]> {
  return (await env.MEDIA.list({ prefix: `media/${id}/` })).objects.map((o) => o.key).sort();
}

describe("GET /Medias/{id}", () => {
  it("returns the description with its ETag, and 304 when unchanged", async () => {
    const media = await uploadMedia(sample("photo.jpg"), { name: "photo.jpg", mimeType: "image/jpeg", user: owner });
    const res = await call(`/Medias/${media.id}`, { user: reader });
    expect(res.status).toBe(200);
    expect(MediaSchema.parse(res.body)).toEqual(media);
    expect(res.body.owner).toEqual({ id: owner.id, name: owner.name });
    const again = await call(`/Medias/${media.id}`, { user: reader, headers: { "if-none-match": res.headers.get("etag")! } });
    expect(again.status).toBe(304);
  });

  it.each([
    { case: "unknown", path: () => `/Medias/${crypto.randomUUID()}`, status: 404, code: "NotFound" },
    { case: "malformed", path: () => "/Medias/123", status: 400, code: "ValidationFailed" },
  ])("answers an $case id with $status", async ({ path, status, code }) => {
    const res = await call(path());
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ code });
  });

  it("needs a token and media_read", async () => {
    const media = await uploadMedia(sample("grey.jpg"), { name: "g.jpg", mimeType: "image/jpeg" });
    expect((await call(`/Medias/${media.id}`, { anonymous: true })).status).toBe(401);
    expect((await call(`/Medias/${media.id}`, { user: { permissions: [PERMISSIONS.mediaWrite] } })).status).toBe(403);
  });
});

describe("DELETE /Medias/{id}", () => {
  it.each([
    { case: "its owner", user: owner },
    { case: "a holder of media_write", user: editor },
  ])("lets $case delete it, with every stored size and a deleted event", async ({ user }) => {
    const media = await uploadMedia(sample("photo.jpg"), { name: "photo.jpg", mimeType: "image/jpeg", user: owner });
    expect(await objectKeys(media.id)).toHaveLength(3);
    const res = await call(`/Medias/${media.id}`, { method: "DELETE", user });
    expect(res.status).toBe(204);
    expect((await call(`/Medias/${media.id}`)).status).toBe(404);
    expect(await objectKeys(media.id)).toEqual([]);
    const event = await env.DB.prepare("SELECT action FROM outbox WHERE entity_kind = 'media' AND entity_id = ?1 AND action = 'deleted'")
      .bind(media.id)
      .first();
    expect(event).toBeTruthy();
  });

  it("lets an owner who only has media_read delete their own media", async () => {
    const media = await uploadMedia(sample("grey.jpg"), {
      name: "g.jpg",
      mimeType: "image/jpeg",
      user: { ...reader, permissions: [PERMISSIONS.mediaRead, PERMISSIONS.mediaWrite] },
    });
    expect((await call(`/Medias/${media.id}`, { method: "DELETE", user: reader })).status).toBe(204);
  });

  it("refuses another user without media_write with 403 and keeps everything", async () => {
    const media = await uploadMedia(sample("grey.jpg"), { name: "g.jpg", mimeType: "image/jpeg", user: owner });
    const res = await call(`/Medias/${media.id}`, { method: "DELETE", user: reader });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: "Forbidden" });
    expect(await objectKeys(media.id)).toHaveLength(2);
  });

  it("honours If-Match: 412 for another ETag, 204 for the current one", async () => {
    const res = await postMedia(sample("grey.jpg"), { name: "g.jpg", mimeType: "image/jpeg" });
    const id = res.body.id;
    expect((await call(`/Medias/${id}`, { method: "DELETE", headers: { "if-match": '"other"' } })).status).toBe(412);
    expect((await call(`/Medias/${id}`, { method: "DELETE", headers: { "if-match": res.headers.get("etag")! } })).status).toBe(204);
  });

  it("answers 404 for an unknown media and 401 without a token", async () => {
    expect((await call(`/Medias/${crypto.randomUUID()}`, { method: "DELETE" })).status).toBe(404);
    expect((await call(`/Medias/${crypto.randomUUID()}`, { method: "DELETE", anonymous: true })).status).toBe(401);
  });
});

describe("consistency: nothing half-uploaded is visible", () => {
  it("deletes the objects it wrote when the row cannot be written", async () => {
    const before = (await env.MEDIA.list({ prefix: "media/" })).objects.length;
    // Make the row's insert fail after the objects are in R2 (storage is per test file).
    await env.DB.exec("ALTER TABLE medias RENAME TO medias_away");
    try {
      const res = await postMedia(sample("photo.jpg"), { name: "photo.jpg", mimeType: "image/jpeg" });
      expect(res.status).toBe(500);
      expect(res.body).toMatchObject({ code: "Internal" });
    } finally {
      await env.DB.exec("ALTER TABLE medias_away RENAME TO medias");
    }
    expect((await env.MEDIA.list({ prefix: "media/" })).objects.length).toBe(before);
  });
});

describe("the OpenAPI document", () => {
  it("documents the media routes with their permissions", async () => {
    const res = await call<{
      paths: Record<string, Record<string, { "x-permission"?: string; requestBody?: { content: Record<string, unknown> } }>>;
    }>("/openapi.json", { anonymous: true });
    expect(res.status).toBe(200);
    const paths = res.body.paths;
    expect(paths["/Medias"]?.post?.["x-permission"]).toBe("media_write");
    expect(Object.keys(paths["/Medias"]?.post?.requestBody?.content ?? {})).toEqual(["multipart/form-data"]);
    expect(paths["/Medias/{id}"]?.get?.["x-permission"]).toBe("media_read");
    expect(paths["/Medias/{id}"]?.delete?.["x-permission"]).toBe("media_read");
    expect(paths["/Medias/{id}/Data"]?.get?.["x-permission"]).toBe("media_read");
    // A 416 is a problem like every other error, with the length in Content-Range.
    const data = (paths["/Medias/{id}/Data"]?.get ?? {}) as {
      responses?: Record<string, { content?: Record<string, unknown>; headers?: Record<string, unknown> }>;
    };
    expect(Object.keys(data.responses?.["416"]?.content ?? {})).toEqual(["application/problem+json"]);
    expect(Object.keys(data.responses?.["416"]?.headers ?? {})).toEqual(["content-range"]);
    expect(paths["/PropertyDefinitions/{id}/InstructionImage"]?.put?.["x-permission"]).toBe("properties_write");
    expect(paths["/PropertyDefinitions/{id}/InstructionImage"]?.get?.["x-permission"]).toBe("properties_read");
  });
});
