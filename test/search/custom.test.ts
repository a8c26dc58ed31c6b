import { describe, expect, it } from "vitest";
import openDeviations from "../../examples/search/open-deviations.js?raw";
import equipmentDeviations from "../../examples/search/equipment-deviations.js?raw";
import { call, type TestUser } from "../support/http";
import { awaitSync, libraryForm, resync, search } from "./support";

const tag = () => crypto.randomUUID().slice(0, 8);
const analyst: Partial<TestUser> = {
  id: "analyst-1",
  name: "Ana Lyst",
  permissions: ["index_read_owned", "index_write", "query_read_owned", "query_write", "work_read", "assets_read"],
};
const other: Partial<TestUser> = {
  id: "analyst-2",
  name: "Other",
  permissions: ["index_read_owned", "index_write", "query_read_owned", "query_write", "work_read"],
};

async function createIndex(source: string, fields: Record<string, string> = {}, user = analyst) {
  const since = new Date(Date.now() - 1).toISOString();
  const res = await call("/Indices", {
    method: "POST",
    rawBody: libraryForm({ Name: `idx-${tag()}`, DisplayName: "Test index", ...fields }, source),
    user,
    headers: { "api-version": "1.1" },
  });
  expect(res.status, res.text).toBe(201);
  return { created: res.body, synced: await awaitSync(res.body.id, since, user) };
}

const LIB = (
  body: string,
  mapping = `{ title: { type: "text", displayName: "Title", alwaysShow: true }, n: { type: "number", displayName: "N" } }`,
) => `
import { IndexBuilder } from "integrity-edge/search";
export default class L extends IndexBuilder {
  mapping() { return ${mapping}; }
  async *entries() { ${body} }
}`;

describe("custom indices", () => {
  it("the README's open-deviations library synchronises, is searched and logs", async () => {
    const t = tag();
    const dev = await call("/Deviations", {
      method: "POST",
      body: { referenceId: `LIB-${t}`, description: `leaking flange ${t}`, status: "new" },
    });
    expect(dev.status, dev.text).toBe(201);
    const { created, synced } = await createIndex(openDeviations, { ObjectOwnerId: "", TriggerSchedule: "0 * * * *" });
    expect(created).toMatchObject({
      type: "custom",
      objectOwner: { id: "analyst-1", name: "Ana Lyst" },
      triggerSchedule: "0 * * * *",
      libraryFileName: "library.js",
    });
    expect(synced.status, JSON.stringify(synced)).toBe("Ready");
    expect(synced.mapping.owner).toMatchObject({ isIdentity: true });
    const found = await search(created.id, { text: `flange ${t}` }, analyst);
    expect(found.status, found.text).toBe(200);
    expect(found.body.results).toHaveLength(1);
    expect(found.body.results[0].fields).toEqual({ referenceId: `LIB-${t}`, description: `leaking flange ${t}` });
    const logs = await call(`/Indices/${created.id}/Logs`, { user: analyst });
    expect(logs.status, logs.text).toBe(200);
    expect(logs.body.map((l: { message: string }) => l.message).join("\n")).toMatch(
      /read \d+ open deviations from 0[\s\S]*started \(created\)/,
    );
  });

  it("the README's equipment library combines two clients", async () => {
    const plant = await call("/Assets", { method: "POST", body: { name: `plant ${tag()}`, kind: "plant" } });
    const equipment = await call("/Assets", {
      method: "POST",
      body: { name: `compressor ${tag()}`, kind: "equipment", parentId: plant.body.id },
    });
    expect(equipment.status, equipment.text).toBe(201);
    const t = tag();
    await call("/Deviations", {
      method: "POST",
      body: { referenceId: `EQ-${t}`, assetReference: { equipment: { id: equipment.body.id } } },
    });
    const { created, synced } = await createIndex(equipmentDeviations);
    expect(synced.status, JSON.stringify(synced)).toBe("Ready");
    const res = await search(created.id, { filter: `references eq 'EQ-${t}'`, fields: ["*"] }, analyst);
    expect(res.body.results).toEqual([
      expect.objectContaining({ id: equipment.body.id, fields: { name: equipment.body.name, deviations: 1, references: [`EQ-${t}`] } }),
    ]);
  });

  it(
    "a library that throws, loops, runs out of memory, imports or breaks the mapping rules keeps the previous " + "documents and logs why",
    async () => {
      const { created } = await createIndex(LIB(`yield { id: "a", title: "first version" };`));
      expect((await search(created.id, { text: "first" }, analyst)).body.total).toBe(1);
      const cases: [string, RegExp][] = [
        [LIB(`throw new Error("source system down");`), /source system down/],
        // A loop that never awaits holds the thread: it is stopped after one stretch (issue 32).
        [LIB(`for (;;) {}`), /worked for more than 50 ms without awaiting or yielding/],
        [LIB(`const a = []; for (;;) a.push("x".repeat(100000));`), /memory limit/],
        [`import fs from "fs";\n` + LIB(`yield { id: "b" };`), /import of 'fs' is not allowed/],
        [LIB(`yield { id: "b" };`, `{ "bad name": { type: "text", displayName: "x" } }`), /mapping breaks the rules: field 'bad name'/],
        [LIB(`yield { id: "b" };`, `{ t: { type: "blob", displayName: "x" } }`), /type must be one of/],
        [LIB(`yield { id: "b", unknown: 1 };`), /field 'unknown' is not in the mapping/],
        [LIB(`yield { id: "b", n: "seven" };`), /field 'n' \(number\) holds not a finite number/],
        [LIB(`yield { title: "no id" };`), /needs an id/],
        [`export default class NotABuilder {}`, /must be a class extending IndexBuilder/],
        [LIB(`yield { id: "b", title: "x" }; await this.services.files.list({});`), /files client needs the permission 'files_read'/],
        [
          LIB(
            `yield* []; this.x = (x) => x; `,
            `Object.fromEntries(Array.from({ length: 5001 }, (_, i) => ["f" + i, { type: "text", displayName: "f" }]))`,
          ),
          /5001 fields; at most 5000/,
        ],
        [`export default class extends (await import("integrity-edge/search")).IndexBuilder { mapping() { return {}; } }`, /has no fields/],
        [`this is not javascript`, /SyntaxError/],
      ];
      for (const [source, reason] of cases) {
        const since = new Date(Date.now() - 1).toISOString();
        const put = await call(`/Indices/${created.id}/File`, {
          method: "PUT",
          rawBody: libraryForm({}, source),
          user: analyst,
          headers: { "api-version": "1.1" },
        });
        expect(put.status, put.text).toBe(200);
        const after = await awaitSync(created.id, since, analyst, 60_000);
        expect(after.status, source).toBe("Failed");
        expect(after.lastSynchronization.message, source).toMatch(reason);
        expect(after.documentCount).toBe(1);
        const still = await search(created.id, { text: "first" }, analyst);
        expect(
          still.body.results.map((r: { id: string }) => r.id),
          source,
        ).toEqual(["a"]);
        const logs = await call(`/Indices/${created.id}/Logs?take=3`, { user: analyst });
        expect(logs.body[0].message).toMatch(/failed/);
      }
    },
    180_000,
  );

  it(
    "is the caller's own: others do not see it, only the owner changes or deletes it, deleting removes documents " + "and saved queries",
    async () => {
      const { created } = await createIndex(LIB(`yield { id: "a", title: "private words" };`));
      expect((await call(`/Indices/${created.id}`, { user: other })).status).toBe(404);
      expect((await search(created.id, { text: "private" }, other)).status).toBe(404);
      expect((await call("/Indices", { user: other })).body.map((i: { id: string }) => i.id)).not.toContain(created.id);
      expect(
        (await call(`/Indices/${created.id}`, { user: { ...other, permissions: [...other.permissions!, "index_read_all"] } })).status,
      ).toBe(200);
      expect(
        (
          await call(`/Indices/${created.id}`, {
            method: "DELETE",
            user: { ...other, permissions: [...other.permissions!, "index_read_all"] },
          })
        ).status,
      ).toBe(403);
      const saved = await call("/Queries", {
        method: "POST",
        body: { name: "mine", index: { id: created.id }, queryObject: { text: "private" } },
        user: analyst,
      });
      expect(saved.status, saved.text).toBe(201);
      expect((await call(`/Indices/${created.id}`, { method: "DELETE", user: analyst })).status).toBe(204);
      expect((await call(`/Indices/${created.id}`, { user: analyst })).status).toBe(404);
      expect((await call(`/Queries/${saved.body.id}`, { user: analyst })).status).toBe(404);
      // The name is free again.
      expect(
        (
          await call(`/Indices`, {
            method: "POST",
            rawBody: libraryForm({ Name: created.name, DisplayName: "again" }, LIB("")),
            user: analyst,
          })
        ).status,
      ).toBe(201);
    },
  );

  it("checks the creation form and rule 9 on updates", async () => {
    const bad = async (fields: Record<string, string>, source: string | undefined, field: string) => {
      const res = await call("/Indices", { method: "POST", rawBody: libraryForm(fields, source), user: analyst });
      expect(res.status, res.text).toBe(400);
      expect(res.body.errors[0].field).toBe(field);
    };
    await bad({ DisplayName: "x" }, LIB(""), "body.name");
    await bad({ Name: "platform-mine", DisplayName: "x" }, LIB(""), "body.name");
    await bad({ Name: `ok-${tag()}` }, LIB(""), "body.displayName");
    await bad({ Name: `ok-${tag()}`, DisplayName: "x" }, undefined, "body.file");
    await bad({ Name: `ok-${tag()}`, DisplayName: "x", TriggerSchedule: "every hour" }, LIB(""), "body.triggerSchedule");
    await bad({ Name: `ok-${tag()}`, DisplayName: "x", Colour: "red" }, LIB(""), "body.Colour");
    const { created } = await createIndex(LIB(""));
    const dup = await call("/Indices", {
      method: "POST",
      rawBody: libraryForm({ Name: created.name.toUpperCase(), DisplayName: "x" }, LIB("")),
      user: analyst,
    });
    expect(dup.status).toBe(409);
    const body = {
      id: created.id,
      name: created.name,
      displayName: "Renamed",
      objectOwner: created.objectOwner,
      triggerSchedule: "30 6 * * 1",
      type: "custom",
    };
    const typeChange = await call("/Indices", { method: "PUT", body: { ...body, type: "standard" }, user: analyst });
    expect(typeChange.body.errors[0]).toMatchObject({ field: "body.type", rule: "immutable" });
    const ok = await call("/Indices", { method: "PUT", body, user: analyst });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({ displayName: "Renamed", triggerSchedule: "30 6 * * 1" });
    const stale = await call("/Indices", { method: "PUT", body, user: analyst, headers: { "if-match": `"${"0".repeat(20)}"` } });
    expect(stale.status).toBe(412);
  });

  it("runs on its trigger schedule through the shared dispatcher", async () => {
    const { created } = await createIndex(LIB(`yield { id: "x", title: "tick " + Date.now() };`), { TriggerSchedule: "*/5 * * * *" });
    const { env } = await import("cloudflare:workers");
    const row = await env.DB.prepare("SELECT next_run_at FROM schedules WHERE kind = 'search-index' AND owner_id = ?1")
      .bind(created.id)
      .first<{ next_run_at: string }>();
    expect(row?.next_run_at).toBeTruthy();
    const { dispatchDueRuns } = await import("../../src/pkg/schedule");
    const { searchScheduleKind } = await import("../../src/search/sync");
    const { createLogger } = await import("../../src/pkg/logger");
    const since = new Date(Date.now() - 1).toISOString();
    await dispatchDueRuns(env, new Date(Date.parse(row!.next_run_at) + 1000), [searchScheduleKind], createLogger("error", {}));
    const after = await awaitSync(created.id, since, analyst);
    expect(after.lastSynchronization.reason).toBe("trigger schedule");
  });

  it("can be resynchronised by its owner (1.1 by id)", async () => {
    const { created } = await createIndex(LIB(`yield { id: "x", title: "again" };`));
    const synced = await resync(created.id, analyst);
    expect(synced.lastSynchronization.reason).toMatch(/requested by Ana Lyst/);
    expect((await call(`/Indices/${created.id}/Resynchronization`, { method: "PUT", user: other })).status).toBe(404);
  });
});
