/** GET /Medias (issue 21 §3): the list on the shared query engine, its filters and paging. */
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { uploadMedia } from "./support/media";

const text = (s: string) => new TextEncoder().encode(s);
const otherUser = { id: "3f2b9c1e-5d7a-4e21-9b0c-6a8d4e2f1a03", name: "Other Uploader" };

async function threeMedia() {
  const tag = crypto.randomUUID().slice(0, 8);
  const report = await uploadMedia(text("report"), { name: `report-${tag}.txt`, type: "document", mimeType: "text/plain" });
  const photo = await uploadMedia(text("not really an image"), { name: `photo-${tag}.jpg`, type: "image", mimeType: "image/jpeg" });
  const notes = await uploadMedia(text("notes"), { name: `notes-${tag}.txt`, type: "document", mimeType: "text/plain", user: otherUser });
  return { tag, report, photo, notes, ids: [report.id, photo.id, notes.id].join(",") };
}

const idsOf = (body: unknown) => (body as { id: string }[]).map((m) => m.id);

describe("GET /Medias", () => {
  it("lists media as a bare array, newest first, each as GET /Medias/{id} shows it", async () => {
    const { report, photo, notes, ids } = await threeMedia();
    const res = await call(`/Medias?ids=${ids}`);
    expect(res.status, res.text).toBe(200);
    expect(idsOf(res.body)).toEqual([notes.id, photo.id, report.id]);
    expect(res.body[2]).toEqual((await call(`/Medias/${report.id}`)).body);
  });

  it("filters by types, objectOwnerIds, searchText (name), createdFrom and createdTo", async () => {
    const { tag, report, photo, notes, ids } = await threeMedia();
    const list = async (query: string) => idsOf((await call(`/Medias?ids=${ids}&${query}`)).body).sort();
    expect(await list("types=image")).toEqual([photo.id]);
    expect(await list("types=document,image")).toEqual([report.id, photo.id, notes.id].sort());
    expect(await list(`objectOwnerIds=${otherUser.id}`)).toEqual([notes.id]);
    expect(await list(`searchText=${encodeURIComponent(`REPORT-${tag}`)}`)).toEqual([report.id]);
    expect(await list(`createdFrom=${encodeURIComponent(notes.createdAt)}`)).toEqual([notes.id]);
    expect(await list(`createdTo=${encodeURIComponent(photo.createdAt)}`)).toEqual([report.id]);
    expect(await list(`createdFrom=${encodeURIComponent(photo.createdAt)}&createdTo=${encodeURIComponent(notes.createdAt)}`)).toEqual([
      photo.id,
    ]);
    expect(await list(`excludeIds=${photo.id}&types=document`)).toEqual([report.id, notes.id].sort());
  });

  it("orders and pages like every list (skip, take, includeTotal)", async () => {
    const { report, photo, notes, ids } = await threeMedia();
    const page = await call(`/Medias?ids=${ids}&order=name asc&skip=1&take=1&includeTotal=true`);
    expect(page.status, page.text).toBe(200);
    expect(page.headers.get("x-total-count")).toBe("3");
    // names: notes-..., photo-..., report-...
    expect(idsOf(page.body)).toEqual([photo.id]);
    // owner.name desc: "Test User" before "Other Uploader"; then createdAt asc.
    expect(idsOf((await call(`/Medias?ids=${ids}&order=owner.name desc, createdAt asc`)).body)).toEqual([report.id, photo.id, notes.id]);
    expect((await call(`/Medias?ids=${ids}`)).headers.get("x-total-count")).toBeNull();
  });

  it("400 InvalidQuery naming the parameter for an unknown type, a malformed instant or an unknown order field", async () => {
    for (const [query, field] of [
      ["types=video", "query.types"],
      ["createdFrom=yesterday", "query.createdFrom"],
      ["createdTo=2026-13-45", "query.createdTo"],
      ["order=colour asc", "query.order"],
    ] as const) {
      const res = await call(`/Medias?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.code).toBe("InvalidQuery");
      expect(res.body.errors[0].field, query).toBe(field);
    }
  });

  it("needs media_read", async () => {
    expect((await call("/Medias", { anonymous: true })).status).toBe(401);
    expect((await call("/Medias", { user: { permissions: ["media_write"] } })).status).toBe(403);
  });
});
