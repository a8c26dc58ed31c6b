import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { WorkTemplateSchema } from "../../src/templates/work/schema";
import { call } from "../support/http";
import { createEntityType, seedPropertyDefinition } from "../support/factories/types";
import { baseWorkItemOn, createActivityTemplate, createWorkTemplate, putBody, unique } from "./factories";

const READER = { permissions: ["work_read"] };

describe("POST and GET /WorkTemplates", () => {
  it("creates revision 1 with the caller as owner, General as type and status new, and reads it back with its ETag", async () => {
    const wt = await createWorkTemplate({ tags: ["pump", "annual", "pump"] });
    expect(WorkTemplateSchema.safeParse(wt).success).toBe(true);
    expect(wt).toMatchObject({
      revision: 1,
      status: "new",
      typeId: "00000000-0000-4000-8000-000000000001",
      objectOwner: { id: "00000000-0000-4000-8000-00000000aaaa", name: "Test User" },
      tags: ["pump", "annual"],
      inUse: false,
    });
    expect(wt.activityTemplates.map((l: { order: number }) => l.order)).toEqual([0, 1, 2]);
    const read = await call(`/WorkTemplates/${wt.id}`);
    expect(read.status).toBe(200);
    expect(read.headers.get("etag")).toBe(wt.etag);
    const { etag: _etag, ...value } = wt;
    expect(read.body).toEqual(value);
    expect((await call(`/WorkTemplates/${wt.id}`, { headers: { "if-none-match": wt.etag } })).status).toBe(304);
  });

  it("stores WorkTemplate properties of the work type and filters by them", async () => {
    const def = await seedPropertyDefinition({ applicationRule: "WorkTemplate", format: "text" });
    const type = await createEntityType({ appliesTo: "WorkTemplate", propertyDefinitions: [{ id: def.id }] });
    const wt = await createWorkTemplate({ typeId: type.id, properties: [{ name: def.name, value: "Zone A" }] });
    expect(wt.properties).toEqual([{ name: def.name, value: "Zone A" }]);
    const listed = await call(`/WorkTemplates?properties=${encodeURIComponent(`${def.name} eq 'Zone A'`)}`);
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.map((t: { id: string }) => t.id)).toEqual([wt.id]);
  });

  it("answers 404 for an unknown id and for a revision that does not exist", async () => {
    expect((await call(`/WorkTemplates/${crypto.randomUUID()}`)).body.code).toBe("NotFound");
    const wt = await createWorkTemplate();
    expect((await call(`/WorkTemplates/${wt.id}?revision=2`)).status).toBe(404);
  });
});

describe("validation", () => {
  const at = crypto.randomUUID();
  const section = crypto.randomUUID();
  const cases: [string, Record<string, unknown>, string, string][] = [
    ["missing displayName", { displayName: undefined }, "body.displayName", "invalid_type"],
    ["unknown status", { status: "nope" }, "body.status", "exists"],
    ["unknown type", { typeId: crypto.randomUUID() }, "body.typeId", "exists"],
    ["unknown property", { properties: [{ name: "nope", value: 1 }] }, "body.properties.0.name", "unknownProperty"],
    [
      "unknown activity template",
      { activityTemplates: [{ activityTemplateId: at }] },
      "body.activityTemplates.0.activityTemplateId",
      "exists",
    ],
    [
      "duplicate section id",
      {
        sectionTemplates: [
          { id: section, displayName: "a" },
          { id: section, displayName: "b" },
        ],
      },
      "body.sectionTemplates.1.id",
      "duplicate",
    ],
    ["unknown field", { colour: "red" }, "body", "unrecognized_keys"],
    ["too long tag", { tags: ["x".repeat(101)] }, "body.tags.0", "too_big"],
  ];
  it.each(cases)("%s → 400", async (_name, overrides, field, rule) => {
    const res = await call("/WorkTemplates", { method: "POST", body: { displayName: unique("T"), ...overrides } });
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe("ValidationFailed");
    expect(res.body.errors).toContainEqual(expect.objectContaining({ field, rule }));
  });

  it("refuses a section id that is not a section of the template", async () => {
    const a = await createActivityTemplate();
    const res = await call("/WorkTemplates", {
      method: "POST",
      body: { displayName: "T", activityTemplates: [{ activityTemplateId: a.id, sectionTemplateId: section }] },
    });
    expect(res.body.errors).toContainEqual(
      expect.objectContaining({ field: "body.activityTemplates.0.sectionTemplateId", rule: "exists" }),
    );
  });

  it("refuses a work type for another kind of entity", async () => {
    const type = await createEntityType({ appliesTo: "Deviation" });
    const res = await call("/WorkTemplates", { method: "POST", body: { displayName: "T", typeId: type.id } });
    expect(res.body.errors).toContainEqual(expect.objectContaining({ field: "body.typeId", rule: "appliesTo" }));
  });

  it("reports dependent-route problems at the item's index", async () => {
    const wt = await createWorkTemplate();
    const res = await call(`/WorkTemplates/${wt.id}/ActivityTemplates`, {
      method: "PUT",
      body: [wt.activityTemplates[0], { activityTemplateId: crypto.randomUUID() }],
    });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: "body.1.activityTemplateId", rule: "exists" })]);
    const dup = await call(`/WorkTemplates/${wt.id}/SectionTemplates`, {
      method: "POST",
      body: { id: wt.sectionTemplates[0].id, displayName: "again" },
    });
    expect(dup.body.errors).toEqual([expect.objectContaining({ field: "body.id", rule: "duplicate" })]);
    const missing = await call(`/WorkTemplates/${wt.id}/SectionTemplates/${crypto.randomUUID()}`, { method: "DELETE" });
    expect(missing.status).toBe(404);
  });
});

describe("PUT /WorkTemplates", () => {
  it("accepts what it read, keeps absent dependent lists and replaces given ones", async () => {
    const wt = await createWorkTemplate();
    const kept = await call("/WorkTemplates", {
      method: "PUT",
      body: putBody(wt, { displayName: "Renamed", activityTemplates: undefined, sectionTemplates: undefined }),
    });
    expect(kept.status, kept.text).toBe(200);
    expect(kept.body).toMatchObject({
      displayName: "Renamed",
      activityTemplates: wt.activityTemplates,
      sectionTemplates: wt.sectionTemplates,
    });
    const replaced = await call("/WorkTemplates", { method: "PUT", body: putBody(kept.body, { sectionTemplates: [] }) });
    expect(replaced.status, replaced.text).toBe(400);
    expect(replaced.body.errors[0].field).toBe("body.activityTemplates.0.sectionTemplateId");
    const cleared = await call("/WorkTemplates", {
      method: "PUT",
      body: putBody(kept.body, { sectionTemplates: [], activityTemplates: [] }),
    });
    expect(cleared.body).toMatchObject({ sectionTemplates: [], activityTemplates: [], revision: 1 });
  });

  it("404 for an unknown id, 412 for a stale If-Match", async () => {
    const wt = await createWorkTemplate();
    expect((await call("/WorkTemplates", { method: "PUT", body: putBody(wt, { id: crypto.randomUUID() }) })).status).toBe(404);
    await call("/WorkTemplates", { method: "PUT", body: putBody(wt, { displayName: "first" }) });
    const stale = await call("/WorkTemplates", {
      method: "PUT",
      body: putBody(wt, { displayName: "second" }),
      headers: { "if-match": wt.etag },
    });
    expect(stale.status).toBe(412);
  });

  it("deleting a section keeps its activity templates outside any section", async () => {
    const wt = await createWorkTemplate();
    const res = await call(`/WorkTemplates/${wt.id}/SectionTemplates/${wt.sectionTemplates[0].id}`, { method: "DELETE" });
    expect(res.status).toBe(200);
    expect(res.body.activityTemplates[0]).toMatchObject({ id: wt.activityTemplates[0].id, sectionTemplateId: null });
  });
});

describe("GET /WorkTemplates", () => {
  it("lists latest revisions only, with every filter", async () => {
    const tag = unique("tag").replace(" ", "-");
    const a = await createWorkTemplate({ tags: [tag], status: "active", objectOwner: { id: "owner-a", name: "Owner A" } });
    const b = await createWorkTemplate({ tags: [tag], displayName: `${unique("Zeta")}`, referenceId: `REF-${tag}` });
    await baseWorkItemOn(a.id, 1);
    await call("/WorkTemplates", { method: "PUT", body: putBody(a, { displayName: "A v2" }) });
    const ids = (res: { body: { id: string }[] }) => res.body.map((t) => t.id);
    const all = await call(`/WorkTemplates?tags=${encodeURIComponent(tag)}`);
    expect(all.body.map((t: { id: string; revision: number }) => [t.id, t.revision])).toEqual([
      [a.id, 2],
      [b.id, 1],
    ]);
    expect(ids(await call(`/WorkTemplates?tags=${encodeURIComponent(tag)}&statuses=active`))).toEqual([a.id]);
    expect(ids(await call(`/WorkTemplates?tags=${encodeURIComponent(tag)}&objectOwnerIds=owner-a`))).toEqual([a.id]);
    expect(ids(await call(`/WorkTemplates?searchText=${encodeURIComponent(`ref-${tag}`)}`))).toEqual([b.id]);
    expect(ids(await call(`/WorkTemplates?ids=${a.id},${b.id}&excludeIds=${a.id}`))).toEqual([b.id]);
    expect(ids(await call(`/WorkTemplates?tags=${encodeURIComponent(tag)}&order=displayName desc`))).toEqual([b.id, a.id]);
    expect(ids(await call(`/WorkTemplates?tags=${encodeURIComponent(tag)}&skip=1&take=1`))).toEqual([b.id]);
    const counted = await call(`/WorkTemplates?tags=${encodeURIComponent(tag)}&includeTotal=true`);
    expect(counted.headers.get("x-total-count")).toBe("2");
    expect((await call("/WorkTemplates?order=nope asc")).status).toBe(400);
  });

  it("answers unique values over latest revisions", async () => {
    const wt = await createWorkTemplate({ objectOwner: { id: "uv-owner", name: "Unique Owner" } });
    const res = await call(`/WorkTemplates/UniqueValues?fieldNames=objectOwner,revision&ids=${wt.id}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual([
      { fieldName: "objectOwner", values: [{ displayName: "Unique Owner", value: "uv-owner" }] },
      { fieldName: "revision", values: [{ displayName: "1", value: 1 }] },
    ]);
  });
});

describe("file references", () => {
  async function readyFile(ownerId: string) {
    const id = crypto.randomUUID();
    const now = new Date().toISOString();
    await env.DB.batch([
      env.DB.prepare(
        "INSERT OR IGNORE INTO data_types (id, name, allowed_extensions, etag, created_at, updated_at) VALUES " +
          "('tpl-docs', 'Template docs', '[\"pdf\"]', 'e', ?1, ?1)",
      ).bind(now),
      env.DB.prepare(
        "INSERT INTO files (id, name, data_type_id, size, content_type, r2_key, state, status, owner_id, etag, " +
          "created_at, updated_at) VALUES (?1, 'a.pdf', 'tpl-docs', 1, 'application/pdf', ?2, 'ready', 'none', ?3, 'e', " +
          "?4, ?4)",
      ).bind(id, `files/${id}/k`, ownerId, now),
    ]);
    return id;
  }

  it("links, lists, reads and unlinks (both DELETE forms)", async () => {
    const wt = await createWorkTemplate();
    const fileId = await readyFile("00000000-0000-4000-8000-00000000aaaa");
    const platform = await call(`/WorkTemplates/${wt.id}/FileReferences`, {
      method: "POST",
      body: { location: "Platform", platformFile: { id: fileId } },
    });
    expect(platform.status, platform.text).toBe(201);
    expect(platform.body).toMatchObject({ location: "Platform", platformFile: { id: fileId }, url: null, name: null });
    const external = await call(`/WorkTemplates/${wt.id}/FileReferences`, {
      method: "POST",
      body: { location: "External", url: "https://example.com/manual.pdf", name: "Manual" },
    });
    expect(external.status).toBe(201);
    expect((await call(`/WorkTemplates/${wt.id}/FileReferences`)).body.map((r: { id: string }) => r.id).sort()).toEqual(
      [platform.body.id, external.body.id].sort(),
    );
    expect((await call(`/WorkTemplates/${wt.id}/FileReferences/${external.body.id}`)).body.name).toBe("Manual");
    expect((await call(`/WorkTemplates/${wt.id}/FileReferences?fileReferenceId=${platform.body.id}`, { method: "DELETE" })).status).toBe(
      204,
    );
    expect((await call(`/WorkTemplates/${wt.id}/FileReferences/${external.body.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await call(`/WorkTemplates/${wt.id}/FileReferences/${external.body.id}`, { method: "DELETE" })).status).toBe(404);
    expect((await call(`/WorkTemplates/${wt.id}/FileReferences`)).body).toEqual([]);
    // A reference is not a revision's dependent: linking one does not change the template's revision or ETag.
    expect((await call(`/WorkTemplates/${wt.id}`)).headers.get("etag")).toBe(wt.etag);
  });

  it.each([
    ["Platform without platformFile", { location: "Platform" }, "body.platformFile", "required"],
    ["Platform with a file nobody can see", { location: "Platform", platformFile: { id: "missing" } }, "body.platformFile.id", "exists"],
    ["External without url", { location: "External" }, "body.url", "required"],
    ["External with ftp", { location: "External", url: "ftp://example.com/a" }, "body.url", "format"],
    [
      "External with platformFile",
      { location: "External", url: "https://e.com", platformFile: { id: "x" } },
      "body.platformFile",
      "notAllowed",
    ],
    ["unknown location", { location: "Disk" }, "body.location", "invalid_value"],
  ])("%s → 400", async (_name, body, field, rule) => {
    const wt = await createWorkTemplate();
    const res = await call(`/WorkTemplates/${wt.id}/FileReferences`, { method: "POST", body });
    expect(res.status).toBe(400);
    expect(res.body.errors).toContainEqual(expect.objectContaining({ field, rule }));
  });

  it("refuses a file another user owns and has not published", async () => {
    const wt = await createWorkTemplate();
    const fileId = await readyFile("someone-else");
    const res = await call(`/WorkTemplates/${wt.id}/FileReferences`, {
      method: "POST",
      body: { location: "Platform", platformFile: { id: fileId } },
    });
    expect(res.status).toBe(400);
  });

  it("404 on an unknown template", async () => {
    const res = await call(`/WorkTemplates/${crypto.randomUUID()}/FileReferences`, {
      method: "POST",
      body: { location: "External", url: "https://e.com" },
    });
    expect(res.status).toBe(404);
  });
});

describe("GET /Tags", () => {
  it("returns every distinct tag of work templates and work items, sorted, optionally searched", async () => {
    const marker = crypto.randomUUID().slice(0, 8);
    await createWorkTemplate({ tags: [`b-${marker}`, `a-${marker}`] });
    await createWorkTemplate({ tags: [`a-${marker}`] });
    await env.DB.prepare("INSERT INTO entity_tags (entity_kind, entity_id, tag) VALUES ('workItem', ?1, ?2)")
      .bind(crypto.randomUUID(), `c-${marker}`)
      .run();
    const res = await call(`/Tags?searchText=${marker}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([`a-${marker}`, `b-${marker}`, `c-${marker}`]);
  });
});

describe("security", () => {
  const routes: [string, string][] = [
    ["GET", "/WorkTemplates"],
    ["POST", "/WorkTemplates"],
    ["PUT", "/WorkTemplates"],
    ["DELETE", `/WorkTemplates/${crypto.randomUUID()}`],
    ["POST", `/WorkTemplates/${crypto.randomUUID()}/SectionTemplates`],
    ["GET", "/Tags"],
  ];
  it.each(routes)("%s %s without a token → 401", async (method, path) => {
    expect((await call(path, { method, anonymous: true })).status).toBe(401);
  });
  it.each(routes.filter(([m]) => m !== "GET"))("%s %s without work_write → 403", async (method, path) => {
    const res = await call(path, { method, body: {}, user: READER });
    expect(res.status).toBe(403);
  });
  it("GET without work_read → 403", async () => {
    expect((await call("/WorkTemplates", { user: { permissions: ["work_write"] } })).status).toBe(403);
  });
});
