/**
 * Lists that used to bypass the query engine (categories, data types, output types, model definition
 * versions, an index's log lines) now take the same paging and filters as every other list: ids and
 * excludeIds, searchText, order, skip, take, includeTotal (X-Total-Count); their default order and
 * their answer (a bare array) are as before.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { STANDARD_INDICES } from "../../src/search/standard";
import { call } from "../support/http";

const tag = () => crypto.randomUUID().slice(0, 8);
const idsOf = (body: { id: string }[]) => body.map((item) => item.id);

async function created(path: string, body: Record<string, unknown>): Promise<{ id: string; name: string }> {
  const res = await call(path, { method: "POST", body });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

/** The common checks over three items whose names sort b, a, c → a, b, c and contain `t`. */
async function commonChecks(path: string, items: { id: string; name: string }[], t: string) {
  const [b, a, c] = [items[0]!, items[1]!, items[2]!];
  const search = await call(`${path}?searchText=${t}`);
  expect(search.status, search.text).toBe(200);
  expect(Array.isArray(search.body)).toBe(true);
  expect(idsOf(search.body)).toEqual([a.id, b.id, c.id]);
  expect(search.headers.get("x-total-count")).toBeNull();
  const page = await call(`${path}?searchText=${t}&skip=1&take=1&includeTotal=true`);
  expect(idsOf(page.body)).toEqual([b.id]);
  expect(page.headers.get("x-total-count")).toBe("3");
  expect(idsOf((await call(`${path}?searchText=${t}&order=name desc`)).body)).toEqual([c.id, b.id, a.id]);
  expect(idsOf((await call(`${path}?ids=${c.id},${a.id}`)).body)).toEqual([a.id, c.id]);
  expect(idsOf((await call(`${path}?searchText=${t}&excludeIds=${b.id}`)).body)).toEqual([a.id, c.id]);
  const wrong = await call(`${path}?order=nope`);
  expect(wrong.status).toBe(400);
  expect(wrong.body.code).toBe("InvalidQuery");
}

describe("lists on the query engine", () => {
  it("GET /Categories: the default first, then by name; searchText, ids, order and paging", async () => {
    const t = tag();
    const items = [
      await created("/Categories", { name: `B ${t}` }),
      await created("/Categories", { name: `a ${t}` }),
      await created("/Categories", { name: `C ${t}` }),
    ];
    await commonChecks("/Categories", items, t);
    const all = await call("/Categories");
    expect(all.body[0]).toMatchObject({ isDefault: true });
    const names = all.body.slice(1).map((category: { name: string }) => category.name.toLowerCase());
    expect(names).toEqual([...names].sort());
  });

  it("GET /DataTypes: by name; ids are the slugs", async () => {
    const t = tag();
    const items = [
      await created("/DataTypes", { name: `B ${t}`, allowedExtensions: ["csv"] }),
      await created("/DataTypes", { name: `a ${t}`, allowedExtensions: ["csv"] }),
      await created("/DataTypes", { name: `C ${t}`, allowedExtensions: ["csv"] }),
    ];
    expect(items[0]!.id).toBe(`b-${t}`);
    await commonChecks("/DataTypes", items, t);
  });

  it("GET /OutputTypes: by name", async () => {
    const t = tag();
    const items = [
      await created("/OutputTypes", { name: `B ${t}`, schema: null }),
      await created("/OutputTypes", { name: `a ${t}`, schema: null }),
      await created("/OutputTypes", { name: `C ${t}`, schema: null }),
    ];
    await commonChecks("/OutputTypes", items, t);
  });

  it("GET /ModelDefinitions/{name}/versions: oldest first, with the definition list's filters and paging", async () => {
    // No digits in the name: searchText=10 below must match the version "10" alone, not a tag holding "10".
    const name = `score-${tag().replace(/\d/g, (digit) => "ghijklmnop"[Number(digit)]!)}`;
    const versions: { id: string }[] = [];
    for (const version of ["2", "10", "1"]) {
      versions.push(
        await created("/ModelDefinitions", { name, version, location: "External", uri: `https://models.example.com/score/${version}` }),
      );
    }
    const path = `/ModelDefinitions/${encodeURIComponent(name.toUpperCase())}/versions`;
    const all = await call(path);
    expect(all.status, all.text).toBe(200);
    expect(idsOf(all.body)).toEqual(idsOf(versions));
    const page = await call(`${path}?skip=1&take=1&includeTotal=true`);
    expect(idsOf(page.body)).toEqual([versions[1]!.id]);
    expect(page.headers.get("x-total-count")).toBe("3");
    expect((await call(`${path}?order=version asc`)).body.map((v: { version: string }) => v.version)).toEqual(["1", "10", "2"]);
    expect(idsOf((await call(`${path}?locations=External`)).body)).toEqual(idsOf(versions));
    expect((await call(`${path}?locations=ACR`)).body).toEqual([]);
    expect(idsOf((await call(`${path}?ids=${versions[2]!.id}`)).body)).toEqual([versions[2]!.id]);
    expect(idsOf((await call(`${path}?excludeIds=${versions[0]!.id}&searchText=10`)).body)).toEqual([versions[1]!.id]);
  });

  it("GET /Indices/{id}/Logs: newest first, per synchronisation, level and text, with the common paging", async () => {
    const index = STANDARD_INDICES[1]!.id;
    const syncId = `sync-${tag()}`;
    const lines = [
      ["info", "started"],
      ["warn", "slow page"],
      ["error", "timeout reading page 2"],
      ["info", "finished"],
    ];
    for (const [level, message] of lines) {
      await env.DB.prepare("INSERT INTO search_index_logs (index_id, sync_id, level, message, at) VALUES (?1, ?2, ?3, ?4, ?5)")
        .bind(index, syncId, level, message, new Date().toISOString())
        .run();
    }
    const path = `/Indices/${index}/Logs?syncId=${syncId}`;
    const all = await call(path);
    expect(all.status, all.text).toBe(200);
    expect(all.body.map((l: { message: string }) => l.message)).toEqual(["finished", "timeout reading page 2", "slow page", "started"]);
    expect(all.body[0]).toEqual({ seq: expect.any(Number), at: expect.any(String), level: "info", message: "finished", syncId });
    const page = await call(`${path}&skip=1&take=2&includeTotal=true`);
    expect(page.body.map((l: { message: string }) => l.message)).toEqual(["timeout reading page 2", "slow page"]);
    expect(page.headers.get("x-total-count")).toBe("4");
    expect((await call(`${path}&levels=warn,error&order=seq asc`)).body.map((l: { level: string }) => l.level)).toEqual(["warn", "error"]);
    expect((await call(`${path}&searchText=TIMEOUT`)).body.map((l: { message: string }) => l.message)).toEqual(["timeout reading page 2"]);
  });
});
