import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { awaitSync, indexPendingEvents, search, STANDARD } from "./support";

const tag = () => crypto.randomUUID().slice(0, 8);

describe("standard indices", () => {
  it("exist from the first start with their mappings, in both versions", async () => {
    const list = await call("/Indices", { headers: { "api-version": "1.0" } });
    expect(list.status, list.text).toBe(200);
    const names = list.body.map((i: { name: string }) => i.name);
    for (const name of [
      "platform-risks",
      "platform-deviations",
      "platform-equipment",
      "platform-main-systems",
      "platform-channels",
      "platform-work-items",
      "platform-structure-node-reference",
      "platform-plants",
      "platform-main-system-objects",
      "platform-activities",
      "platform-activity-date-inputs",
      "platform-activity-number-inputs",
      "platform-activity-text-inputs",
    ]) {
      expect(names).toContain(name);
    }
    const deviations = list.body.find((i: { name: string }) => i.name === "platform-deviations");
    expect(deviations).toMatchObject({ type: "standard", source: "platform" });
    expect(deviations.mapping.description).toMatchObject({ type: "text", alwaysShow: true });
    expect(deviations.mapping.objectOwner).toMatchObject({ isIdentity: true });
    const risks = list.body.find((i: { name: string }) => i.name === "platform-risks");
    expect(risks).toMatchObject({ source: "library" });
    expect(risks.description).toMatch(/another service/);
  });

  it("finds a deviation by words, prefixes and phrases, ignoring case and accents, and highlights them", async () => {
    const t = tag();
    const created = await call("/Deviations", {
      method: "POST",
      body: { referenceId: `SRCH-${t}`, description: `Corrosión found on the PUMP housing ${t}` },
    });
    expect(created.status, created.text).toBe(201);
    await indexPendingEvents();
    for (const text of [`corrosion ${t}`, `CORROSIÓN ${t}`, `hous* ${t}`, `"pump housing" ${t}`]) {
      const res = await search(STANDARD.deviations, { text });
      expect(res.status, res.text).toBe(200);
      expect(
        res.body.results.map((r: { id: string }) => r.id),
        text,
      ).toEqual([created.body.id]);
    }
    const res = await search(STANDARD.deviations, { text: `pump ${t}` });
    expect(res.body.results[0].fields).toMatchObject({ referenceId: `SRCH-${t}`, description: `Corrosión found on the PUMP housing ${t}` });
    expect(res.body.results[0].highlights.description).toContain("<mark>PUMP</mark>");
    expect((await search(STANDARD.deviations, { text: `"housing pump" ${t}` })).body.total).toBe(0);
  });
});

describe("search requests", () => {
  it("filters with the section 4.1 grammar, `me`, orders, pages, counts facets and returns fields on request", async () => {
    const t = tag();
    const me = { id: `owner-${t}`, name: `Owner ${t}` };
    const mk = async (n: number, status: string, user = me) => {
      const res = await call("/Deviations", {
        method: "POST",
        body: { referenceId: `F${n}-${t}`, description: `valve ${t} number ${n}`, status },
        user,
      });
      expect(res.status, res.text).toBe(201);
      return res.body.id as string;
    };
    const ids = [
      await mk(1, "new"),
      await mk(2, "active"),
      await mk(3, "active"),
      await mk(4, "new", { id: `someone-${t}`, name: "Someone" }),
    ];
    await indexPendingEvents();
    const run = (request: Record<string, unknown>) => search(STANDARD.deviations, { text: `valve ${t}`, ...request }, me);
    expect((await run({ filter: "status eq 'active'", order: "referenceId desc" })).body.results.map((r: { id: string }) => r.id)).toEqual([
      ids[2],
      ids[1],
    ]);
    expect((await run({ filter: "objectOwner eq me", order: "referenceId" })).body.results.map((r: { id: string }) => r.id)).toEqual(
      ids.slice(0, 3),
    );
    expect(
      (await run({ filter: "objectOwner ne me or status in ('active')", order: "referenceId" })).body.results.map(
        (r: { id: string }) => r.id,
      ),
    ).toEqual([ids[1], ids[2], ids[3]]);
    expect((await run({ filter: `referenceId gt 'F2-${t}' and risk eq null`, order: "referenceId" })).body.total).toBe(2);
    const paged = await run({ order: "referenceId asc", skip: 1, take: 2 });
    expect(paged.body).toMatchObject({ total: 4, skip: 1, take: 2 });
    expect(paged.body.results.map((r: { id: string }) => r.id)).toEqual([ids[1], ids[2]]);
    const faceted = await run({ facets: ["status", "objectOwner"] });
    expect(faceted.body.facets.status).toEqual([
      { value: "active", count: 2 },
      { value: "new", count: 2 },
    ]);
    expect(faceted.body.facets.objectOwner).toEqual([
      { value: `Owner ${t}`, count: 3 },
      { value: "Someone", count: 1 },
    ]);
    const all = await run({ fields: ["*"], take: 1 });
    expect(Object.keys(all.body.results[0].fields)).toEqual(
      expect.arrayContaining(["referenceId", "status", "type", "objectOwnerId", "createdAt"]),
    );
    const some = await run({ fields: ["status"], take: 1, highlight: false });
    expect(Object.keys(some.body.results[0].fields)).toEqual(["status"]);
    expect(some.body.results[0].highlights).toBeUndefined();
    const relevance = await run({ order: "relevance" });
    expect(relevance.body.results[0].score).toBeGreaterThan(0);
  });

  it("names the unknown field, the bad type and the bad syntax", async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ filter: "colour eq 'red'" }, "body.filter", "unknownField"],
      [{ filter: "status eq 3" }, "body.filter", "type"],
      [{ filter: "status eq me" }, "body.filter", "type"],
      [{ filter: "status eq" }, "body.filter", "syntax"],
      [{ order: "colour asc" }, "body.order", "unknownField"],
      [{ facets: ["colour"] }, "body.facets[0]", "unknownField"],
      [{ fields: ["status", "colour"] }, "body.fields[1]", "unknownField"],
    ];
    for (const [request, field, rule] of cases) {
      const res = await search(STANDARD.deviations, request);
      expect(res.status, JSON.stringify(request)).toBe(400);
      expect(res.body.errors[0], JSON.stringify(request)).toMatchObject({ field, rule });
    }
    expect((await search(STANDARD.deviations, { take: 201 })).status).toBe(400);
    expect((await search(STANDARD.deviations, { txt: "x" })).status).toBe(400);
  });
});

describe("access", () => {
  it("never returns a document its caller could not read through the resource's own endpoint", async () => {
    const t = tag();
    const plant = await call("/Assets", { method: "POST", body: { name: `refinery ${t}`, kind: "plant" } });
    const dev = await call("/Deviations", { method: "POST", body: { referenceId: `ACC-${t}`, description: `refinery ${t} crack` } });
    expect(dev.status).toBe(201);
    await indexPendingEvents();
    const fieldUser = { id: "field", name: "Field", permissions: ["index_read_owned", "work_read"] };
    const assetUser = { id: "assets", name: "Assets", permissions: ["index_read_owned", "assets_read"] };
    // Each sees what its own endpoints show.
    expect((await call(`/Deviations/${dev.body.id}`, { user: fieldUser })).status).toBe(200);
    expect((await call(`/Deviations/${dev.body.id}`, { user: assetUser })).status).toBe(403);
    expect((await search(STANDARD.deviations, { text: `crack ${t}` }, fieldUser)).body.total).toBe(1);
    expect((await search(STANDARD.deviations, { text: `crack ${t}` }, assetUser)).body.total).toBe(0);
    const plants = "00000000-0000-4000-8000-000000000008";
    expect((await search(plants, { text: `refinery ${t}` }, assetUser)).body.results.map((r: { id: string }) => r.id)).toEqual([
      plant.body.id,
    ]);
    expect((await search(plants, { text: `refinery ${t}` }, fieldUser)).body.total).toBe(0);
    // Without index_read_owned there is no search at all.
    expect((await search(STANDARD.deviations, { text: "x" }, { id: "w", permissions: ["work_read"] })).status).toBe(403);
  });
});

describe("synchronisation", () => {
  it("makes a change searchable through the outbox and the events queue within 5 seconds", async () => {
    const t = tag();
    const started = Date.now();
    const created = await call("/Deviations", { method: "POST", body: { referenceId: `Q-${t}`, description: `queue ${t}` } });
    expect(created.status).toBe(201);
    for (;;) {
      const res = await search(STANDARD.deviations, { text: `queue ${t}` });
      if (res.body.total === 1) break;
      if (Date.now() - started > 5000) throw new Error("not searchable within 5 s");
      await new Promise((r) => setTimeout(r, 50));
    }
    const updated = await call("/Deviations", { method: "PUT", body: { ...created.body, description: `renamed ${t}` } });
    expect(updated.status, updated.text).toBe(200);
    await indexPendingEvents();
    expect((await search(STANDARD.deviations, { text: `queue ${t}` })).body.total).toBe(0);
    expect((await search(STANDARD.deviations, { text: `renamed ${t}` })).body.total).toBe(1);
    expect((await call(`/Deviations/${created.body.id}`, { method: "DELETE" })).status).toBe(204);
    await indexPendingEvents();
    expect((await search(STANDARD.deviations, { text: `renamed ${t}` })).body.total).toBe(0);
  });

  it("a full synchronisation repairs drift (rows changed without events) and reports its outcome", async () => {
    const { env } = await import("cloudflare:workers");
    const t = tag();
    const created = await call("/Deviations", { method: "POST", body: { referenceId: `D-${t}`, description: `before ${t}` } });
    await indexPendingEvents();
    await env.DB.prepare("UPDATE deviations SET description = ?1 WHERE id = ?2").bind(`after ${t}`, created.body.id).run();
    expect((await search(STANDARD.deviations, { text: `after ${t}` })).body.total).toBe(0);
    const synced = await call(`/Indices/platform-deviations/Resynchronization`, { method: "PUT", headers: { "api-version": "1.0" } });
    expect(synced.status, synced.text).toBe(202);
    const index = await awaitSync(STANDARD.deviations, new Date(Date.now() - 1000).toISOString());
    expect(index.lastSynchronization).toMatchObject({ status: "Succeeded" });
    expect(index.documentCount).toBeGreaterThan(0);
    expect((await search(STANDARD.deviations, { text: `after ${t}` })).body.total).toBe(1);
  });

  it("indexes work items, activities and their inputs by format, and assets", async () => {
    const t = tag();
    const wi = await call("/WorkItems", { method: "POST", body: { displayName: `Inspection ${t}`, tags: ["annual"] } });
    expect(wi.status, wi.text).toBe(201);
    const eq = await call("/Assets", { method: "POST", body: { name: `turbine ${t}`, kind: "plant" } });
    expect(eq.status).toBe(201);
    await indexPendingEvents();
    expect((await search(STANDARD.workItems, { text: `inspection ${t}`, filter: "tags eq 'annual'" })).body.total).toBe(1);
    expect((await search("00000000-0000-4000-8000-000000000008", { text: `turbine ${t}` })).body.total).toBe(1);
  });
});

describe("versions and rule 9 on standard indices", () => {
  it("1.0 resynchronises by name, 1.1 by id; the other form is UnsupportedApiVersion", async () => {
    expect(
      (await call(`/Indices/platform-deviations/Resynchronization`, { method: "PUT", headers: { "api-version": "1.1" } })).body.code,
    ).toBe("UnsupportedApiVersion");
    expect(
      (await call(`/Indices/${STANDARD.deviations}/Resynchronization`, { method: "PUT", headers: { "api-version": "1.0" } })).body.code,
    ).toBe("UnsupportedApiVersion");
    expect(
      (await call(`/Indices/${STANDARD.deviations}/Resynchronization`, { method: "PUT", headers: { "api-version": "1.1" } })).status,
    ).toBe(202);
    expect((await call(`/Indices/${STANDARD.deviations}/Logs`, { headers: { "api-version": "1.0" } })).body.code).toBe(
      "UnsupportedApiVersion",
    );
    expect((await call(`/Indices`, { method: "POST", rawBody: new FormData(), headers: { "api-version": "1.0" } })).body.code).toBe(
      "UnsupportedApiVersion",
    );
    expect((await call(`/Indices`, { headers: { "api-version": "2.0" } })).body.code).toBe("UnsupportedApiVersion");
    await awaitSync(STANDARD.deviations);
  });

  it("a standard index changes only its owner, and cannot be deleted", async () => {
    const current = (await call(`/Indices/${STANDARD.equipment}`)).body;
    const body = {
      id: current.id,
      name: current.name,
      displayName: current.displayName,
      objectOwner: current.objectOwner,
      triggerSchedule: current.triggerSchedule,
      type: "standard",
    };
    expect((await call("/Indices", { method: "PUT", body: { ...body, displayName: "Mine" } })).body.errors[0]).toMatchObject({
      field: "body.displayName",
      rule: "standardIndex",
    });
    expect((await call("/Indices", { method: "PUT", body: { ...body, type: "custom" } })).body.errors[0]).toMatchObject({
      field: "body.type",
      rule: "immutable",
    });
    const writer = { id: "writer", name: "Writer", permissions: ["index_read_owned", "index_write"] };
    expect(
      (await call("/Indices", { method: "PUT", body: { ...body, objectOwner: { id: "writer", name: "Writer" } }, user: writer })).status,
    ).toBe(403);
    const given = await call("/Indices", { method: "PUT", body: { ...body, objectOwner: { id: "writer", name: "Writer" } } });
    expect(given.status, given.text).toBe(200);
    expect(given.body.objectOwner).toEqual({ id: "writer", name: "Writer" });
    // Now its owner may resynchronise it.
    expect((await call(`/Indices/${STANDARD.equipment}/Resynchronization`, { method: "PUT", user: writer })).status).toBe(202);
    const del = await call(`/Indices/${STANDARD.equipment}`, { method: "DELETE" });
    expect(del.status).toBe(409);
    expect(del.body.detail).toMatch(/only custom indices can be deleted/);
    await awaitSync(STANDARD.equipment);
  });

  it("a standard index of another service answers empty until fed by a library file", async () => {
    expect((await search(STANDARD.risks, { text: "anything" })).body).toMatchObject({ total: 0, results: [] });
    const lib = `import { IndexBuilder } from "integrity-edge/search";
export default class Risks extends IndexBuilder {
  mapping() { return {}; }
  async *entries() { yield { id: "risk-1", name: "Corrosion under insulation", status: "open" }; }
}`;
    const form = new FormData();
    form.append("File", new File([lib], "risks.js"));
    const since = new Date(Date.now() - 1).toISOString();
    const fed = await call(`/Indices/${STANDARD.risks}/File`, { method: "PUT", rawBody: form });
    expect(fed.status, fed.text).toBe(200);
    const index = await awaitSync(STANDARD.risks, since);
    expect(index.status, JSON.stringify(index)).toBe("Failed");
    expect(index.lastSynchronization.message).toMatch(/no fields/);
    const lib2 = lib.replace("mapping() { return {}; }", `mapping() { return { name: { type: "text", displayName: "Name" } }; }`);
    const form2 = new FormData();
    form2.append("File", new File([lib2], "risks.js"));
    const since2 = new Date(Date.now() - 1).toISOString();
    expect((await call(`/Indices/${STANDARD.risks}/File`, { method: "PUT", rawBody: form2 })).status).toBe(200);
    expect((await awaitSync(STANDARD.risks, since2)).status).toBe("Ready");
    expect((await search(STANDARD.risks, { text: "insulation", filter: "status eq 'open'" })).body.total).toBe(1);
    expect((await call(`/Indices/${STANDARD.deviations}/File`, { method: "PUT", rawBody: form2 })).status).toBe(409);
  });
});
