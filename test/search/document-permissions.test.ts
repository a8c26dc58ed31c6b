/**
 * A custom index's library reads with its owner's permissions; its documents carry the read
 * permissions of the clients it used, and a search shows them only to callers holding them (issue 20
 * §3). Played as a hostile reader: index_read_all, without work_read.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDataType, uploadFile } from "../support/factories/upload";
import { call, type TestUser } from "../support/http";
import { awaitSync, libraryForm, search } from "./support";

const tag = () => crypto.randomUUID().slice(0, 8);
const base = ["index_read_owned", "query_read_owned", "query_write"];
/** User A: writes the index, reads deviations and assets. */
const owner: Partial<TestUser> = { id: "perm-owner-a", name: "Owner A", permissions: [...base, "index_write", "work_read", "assets_read"] };
/** User B: may read every index, but no work and no assets. */
const reader: Partial<TestUser> = { id: "perm-reader-b", name: "Reader B", permissions: [...base, "index_read_all"] };
/** User C: every index and work, no assets. */
const workReader: Partial<TestUser> = { id: "perm-reader-c", name: "Reader C", permissions: [...base, "index_read_all", "work_read"] };
/** User D: every index, work and assets. */
const fullReader: Partial<TestUser> = {
  id: "perm-reader-d",
  name: "Reader D",
  permissions: [...base, "index_read_all", "work_read", "assets_read"],
};

const v11 = { "api-version": "1.1" };

async function createIndex(source: string) {
  const since = new Date(Date.now() - 1).toISOString();
  const res = await call("/Indices", {
    method: "POST",
    rawBody: libraryForm({ Name: `perm-${tag()}`, DisplayName: "Permissions" }, source),
    user: owner,
    headers: v11,
  });
  expect(res.status, res.text).toBe(201);
  const synced = await awaitSync(res.body.id, since, owner);
  expect(synced.status, JSON.stringify(synced)).toBe("Ready");
  return res.body.id as string;
}

const keys = (res: { status: number; text: string; body: { results: { id: string }[] } }) => {
  expect(res.status, res.text).toBe(200);
  return res.body.results.map((r) => r.id).sort();
};

describe("documents of a custom index carry the permissions of the clients its library used", () => {
  it("a reader without work_read gets none of the documents built from deviations; a reader with it gets them", async () => {
    const t = tag();
    const deviation = await call("/Deviations", {
      method: "POST",
      body: { referenceId: `SECRET-${t}`, description: `confidential crack ${t}`, status: "new" },
    });
    expect(deviation.status, deviation.text).toBe(201);
    const asset = await call("/Assets", { method: "POST", body: { name: `plant ${t}`, kind: "plant" } });
    expect(asset.status, asset.text).toBe(201);
    // A document before any client call (needs nothing), one after the deviations client (work_read),
    // one after the assets client as well (work_read and assets_read).
    const id = await createIndex(`
import { IndexBuilder } from "integrity-edge/search";
export default class Leaky extends IndexBuilder {
  mapping() {
    return {
      title: { type: "text", displayName: "Title", alwaysShow: true },
      kind: { type: "keyword", displayName: "Kind", alwaysShow: true },
    };
  }
  async *entries() {
    yield { id: "static", title: "public words ${t}", kind: "static" };
    const d = await this.services.deviations.get("${deviation.body.id}");
    yield { id: "deviation", title: d.description + " ${t}", kind: "deviation" };
    const a = await this.services.assets.get("${asset.body.id}");
    yield { id: "combined", title: d.description + " at " + a.name, kind: "combined" };
  }
}`);
    // The owner sees everything.
    expect(keys(await search(id, { text: t }, owner))).toEqual(["combined", "deviation", "static"]);

    // B: index_read_all but no work_read. Not by text, filter, order, facets, count or a saved query.
    const byText = await search(id, { text: `confidential ${t}`, fields: ["*"], highlight: true }, reader);
    expect(keys(byText)).toEqual([]);
    expect(byText.body.total).toBe(0);
    expect(keys(await search(id, { text: t }, reader))).toEqual(["static"]);
    const all = await search(id, { order: "kind asc", facets: ["kind"], take: 50 }, reader);
    expect(keys(all)).toEqual(["static"]);
    expect(all.body.total).toBe(1);
    expect(all.body.facets.kind).toEqual([{ value: "static", count: 1 }]);
    expect(keys(await search(id, { filter: "kind eq 'deviation' or kind eq 'combined'" }, reader))).toEqual([]);
    expect(JSON.stringify((await search(id, { text: "confidential" }, reader)).body)).not.toContain(`crack ${t}`);
    const saved = await call("/Queries", {
      method: "POST",
      body: { name: `peek ${t}`, index: { id }, queryObject: { text: `crack ${t}` } },
      user: reader,
      headers: v11,
    });
    expect(saved.status, saved.text).toBe(201);
    const executed = await call(`/Queries/${saved.body.id}/Execution`, { method: "POST", user: reader, headers: v11 });
    expect(keys(executed)).toEqual([]);

    // C: work_read but not assets_read sees the deviation's document, not the one built with assets too.
    expect(keys(await search(id, { text: t }, workReader))).toEqual(["deviation", "static"]);
    const facets = await search(id, { facets: ["kind"] }, workReader);
    expect(facets.body.facets.kind.map((f: { value: string }) => f.value).sort()).toEqual(["deviation", "static"]);
    // D: both.
    expect(keys(await search(id, { text: t }, fullReader))).toEqual(["combined", "deviation", "static"]);
  });

  it("a library that calls no client writes documents every reader of the index sees", async () => {
    const t = tag();
    const id = await createIndex(`
import { IndexBuilder } from "integrity-edge/search";
export default class Static extends IndexBuilder {
  mapping() { return { title: { type: "text", displayName: "Title" } }; }
  async *entries() { yield { id: "a", title: "plain ${t}" }; yield { id: "b", title: "plain ${t}" }; }
}`);
    expect(keys(await search(id, { text: t }, reader))).toEqual(["a", "b"]);
  });

  it("a client call that failed (no permission in the grant) gives its documents no permission to need", async () => {
    const t = tag();
    // The owner holds no files_read: the files client answers with an error and returns no data.
    const id = await createIndex(`
import { IndexBuilder } from "integrity-edge/search";
export default class Tries extends IndexBuilder {
  mapping() { return { title: { type: "text", displayName: "Title" } }; }
  async *entries() {
    let note = "none";
    try { await this.services.files.list({}); } catch (e) { note = "refused"; }
    yield { id: "a", title: note + " ${t}" };
  }
}`);
    expect(keys(await search(id, { text: `refused ${t}` }, reader))).toEqual(["a"]);
  });

  it("documents written before they carried permissions are given the library's whole grant, once", async () => {
    const t = tag();
    const deviation = await call("/Deviations", {
      method: "POST",
      body: { referenceId: `OLD-${t}`, description: `old secret ${t}`, status: "new" },
    });
    expect(deviation.status, deviation.text).toBe(201);
    const id = await createIndex(`
import { IndexBuilder } from "integrity-edge/search";
export default class Old extends IndexBuilder {
  mapping() { return { title: { type: "text", displayName: "Title" } }; }
  async *entries() {
    yield { id: "static", title: "old public ${t}" };
    const d = await this.services.deviations.get("${deviation.body.id}");
    yield { id: "deviation", title: d.description };
  }
}`);
    // As the index's Durable Object held them before: every document without a permission.
    const stub = env.SEARCH.get(env.SEARCH.idFromName(id));
    await runInDurableObject(stub, (_instance, state) => {
      const sql = state.storage.sql;
      const gen = Number(JSON.parse(sql.exec<{ v: string }>("SELECT v FROM meta WHERE k = 'generation'").toArray()[0]?.v ?? "1"));
      sql.exec(`UPDATE docs_${gen} SET permission = NULL`);
      sql.exec("DELETE FROM meta WHERE k = 'documentPermissions' OR k LIKE 'permissions:%'");
    });
    // The owner's grant was work_read and assets_read: a reader lacking either sees none of them.
    expect(keys(await search(id, { text: t }, reader))).toEqual([]);
    expect(keys(await search(id, { text: t }, workReader))).toEqual([]);
    expect(keys(await search(id, { text: t }, fullReader))).toEqual(["deviation", "static"]);
    // The next synchronisation writes each document's own permissions again.
    const since = new Date(Date.now() - 1).toISOString();
    expect((await call(`/Indices/${id}/Resynchronization`, { method: "PUT", user: owner, headers: v11 })).status).toBe(202);
    await awaitSync(id, since, owner);
    expect(keys(await search(id, { text: t }, reader))).toEqual(["static"]);
  });

  it("documents built from the files client, which reads as the owner, are the owner's only", async () => {
    const t = tag();
    const filesOwner: Partial<TestUser> = {
      id: "perm-files-owner",
      name: "Files Owner",
      permissions: [...base, "index_write", "files_read", "files_write"],
    };
    const filesReader: Partial<TestUser> = {
      id: "perm-files-reader",
      name: "Files Reader",
      permissions: [...base, "index_read_all", "files_read", "files_write"],
    };
    const dataType = await createDataType();
    const file = await uploadFile(dataType.id, { name: `private-${t}.csv`, content: "a,b\n1,2\n", type: "text/csv" }, filesOwner);
    // The reader cannot see the owner's unpublished file through its own endpoint.
    expect((await call(`/Files/${file.body.id}`, { user: filesReader })).status).toBe(404);
    const since = new Date(Date.now() - 1).toISOString();
    const created = await call("/Indices", {
      method: "POST",
      headers: v11,
      user: filesOwner,
      rawBody: libraryForm(
        { Name: `perm-files-${t}`, DisplayName: "Files" },
        `
import { IndexBuilder } from "integrity-edge/search";
export default class Files extends IndexBuilder {
  mapping() { return { title: { type: "text", displayName: "Title" } }; }
  async *entries() {
    const f = await this.services.files.get("${file.body.id}");
    yield { id: "file", title: f.name + " ${t}" };
  }
}`,
      ),
    });
    expect(created.status, created.text).toBe(201);
    const synced = await awaitSync(created.body.id, since, filesOwner);
    expect(synced.status, JSON.stringify(synced)).toBe("Ready");
    expect(keys(await search(created.body.id, { text: t }, filesOwner))).toEqual(["file"]);
    expect(keys(await search(created.body.id, { text: t }, filesReader))).toEqual([]);
    // A token claiming the owner's mark as a permission is not the owner.
    expect(
      keys(
        await search(created.body.id, { text: t }, { ...filesReader, permissions: [...filesReader.permissions!, "user:perm-files-owner"] }),
      ),
    ).toEqual([]);
  });
});
