import { describe, expect, it } from "vitest";
import { uploadMedia } from "../media/support/media";
import { seedActivityTemplate } from "../support/factories/templates-sql";
import { call } from "../support/http";

async function media(name = "photo.txt") {
  return uploadMedia(new TextEncoder().encode(`bytes of ${name} ${crypto.randomUUID()}`), {
    name,
    type: "document",
    mimeType: "text/plain",
  });
}

async function activity() {
  const template = await seedActivityTemplate({});
  const res = await call("/Activities", { method: "POST", body: { basedOn: { id: template.id } } });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string };
}

async function reference(mediaId: string, body: Record<string, unknown> = {}) {
  const res = await call("/MediaReferences", { method: "POST", body: { mediaId, displayName: "Crack at weld 4", ...body } });
  expect(res.status, res.text).toBe(201);
  return { ...res.body, etag: res.headers.get("etag")! };
}

describe("media references", () => {
  it("point at an existing media, are read, updated with If-Match, listed and deleted", async () => {
    const m = await media();
    const created = await reference(m.id, { description: "north side" });
    expect(created).toMatchObject({
      mediaId: m.id,
      media: { id: m.id, name: "photo.txt", type: "document" },
      displayName: "Crack at weld 4",
      description: "north side",
      objectOwner: { id: expect.any(String) },
    });
    const unknown = await call("/MediaReferences", { method: "POST", body: { mediaId: crypto.randomUUID() } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0]).toMatchObject({ field: "body.mediaId", rule: "exists" });
    expect((await call("/MediaReferences", { method: "POST", body: { mediaId: m.id, colour: "red" } })).status).toBe(400);
    const read = await call(`/MediaReferences/${created.id}`);
    expect(read.headers.get("etag")).toBe(created.etag);
    const other = await media("other.txt");
    const put = await call("/MediaReferences", {
      method: "PUT",
      body: { id: created.id, mediaId: other.id, displayName: "Moved" },
      headers: { "if-match": created.etag },
    });
    expect(put.status, put.text).toBe(200);
    expect(put.body).toMatchObject({ mediaId: other.id, displayName: "Moved", description: null });
    expect(
      (
        await call("/MediaReferences", {
          method: "PUT",
          body: { id: created.id, mediaId: other.id },
          headers: { "if-match": created.etag },
        })
      ).status,
    ).toBe(412);
    const listed = await call(`/MediaReferences?mediaIds=${other.id}`);
    expect(listed.body.map((r: { id: string }) => r.id)).toEqual([created.id]);
    expect((await call(`/MediaReferences?unknown=1`)).status).toBe(400);
    expect((await call(`/MediaReferences/${created.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await call(`/MediaReferences/${created.id}`)).status).toBe(404);
  });

  it("are linked to activities idempotently, listed per activity, unlinked, and their links go with either side", async () => {
    const m = await media();
    const [a, b] = [await reference(m.id, { displayName: "first" }), await reference(m.id, { displayName: "second" })];
    const act = await activity();
    expect((await call(`/Activities/${act.id}/MediaReferences/${a.id}`, { method: "POST" })).status).toBe(201);
    expect((await call(`/Activities/${act.id}/MediaReferences/${a.id}`, { method: "POST" })).status).toBe(200);
    expect((await call(`/Activities/${act.id}/MediaReferences/${b.id}`, { method: "POST" })).status).toBe(201);
    expect((await call(`/Activities/${act.id}/MediaReferences`)).body.map((r: { id: string }) => r.id)).toEqual([a.id, b.id]);
    expect((await call(`/MediaReferences?activityIds=${act.id}&order=displayName`)).body.map((r: { id: string }) => r.id)).toEqual([
      a.id,
      b.id,
    ]);
    expect((await call(`/Activities/${crypto.randomUUID()}/MediaReferences/${a.id}`, { method: "POST" })).status).toBe(404);
    expect((await call(`/Activities/${act.id}/MediaReferences/${crypto.randomUUID()}`, { method: "POST" })).status).toBe(404);
    expect((await call(`/Activities/${act.id}/MediaReferences/${a.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await call(`/Activities/${act.id}/MediaReferences/${a.id}`, { method: "DELETE" })).status).toBe(404);
    expect((await call(`/Activities/${act.id}/MediaReferences`)).body.map((r: { id: string }) => r.id)).toEqual([b.id]);
    // Deleting the reference removes its link; deleting the activity removes the rest.
    expect((await call(`/MediaReferences/${b.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await call(`/Activities/${act.id}/MediaReferences`)).body).toEqual([]);
    await call(`/Activities/${act.id}/MediaReferences/${a.id}`, { method: "POST" });
    const current = await call(`/Activities/${act.id}`);
    expect((await call(`/Activities/${act.id}`, { method: "DELETE", headers: { "if-match": current.headers.get("etag")! } })).status).toBe(
      204,
    );
    expect((await call(`/Activities/${act.id}/MediaReferences`)).status).toBe(404);
    expect((await call(`/MediaReferences/${a.id}`)).status).toBe(200);
  });

  it("keep their media: a referenced media cannot be deleted (409) until the references are gone", async () => {
    const m = await media();
    const r = await reference(m.id);
    const refused = await call(`/Medias/${m.id}`, { method: "DELETE" });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/used by 1 media reference/);
    expect((await call(`/Medias/${m.id}`)).status).toBe(200);
    expect((await call(`/MediaReferences/${r.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await call(`/Medias/${m.id}`, { method: "DELETE" })).status).toBe(204);
  });
});
