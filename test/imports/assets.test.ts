/**
 * Issue 37, "Import", kind `assets` (the equipment list of a new plant): each row is the single
 * POST /Assets (or, with an id, PUT /Assets) with its rules; a parent is named by id or by name (a row
 * above it in the same file too), narrowed by the plant column; committed twice, nothing is written again.
 */
import { describe, expect, it } from "vitest";
import { call } from "../support/http";
import { createAsset, createPlantTree, unique } from "../support/factories/work";
import { commitCsv, importCsv, waitForImport } from "./support";

const kind = { kind: "assets" };

interface AssetRead {
  id: string;
  kind: string;
  name: string;
  parentId: string | null;
  plant: { id: string; name: string } | null;
  metadata: Record<string, unknown> | null;
  updatedAt: string;
}

async function assetsNamedLike(text: string): Promise<AssetRead[]> {
  const res = await call<AssetRead[]>(`/Assets?searchText=${encodeURIComponent(text)}&take=100`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

const byName = (list: readonly AssetRead[], name: string) => list.find((a) => a.name === name)!;

describe("assets: dry run", () => {
  it("checks every row as POST /Assets would, a parent named by an earlier row included, and writes nothing", async () => {
    const tag = unique("dry");
    const csv =
      "kind,name,parent,metadata\r\n" +
      `plant,${tag} Plant,,\r\n` +
      `mainSystem,${tag} Cooling,${tag} Plant,"{""tag"":""CW""}"\r\n` +
      `equipment,${tag} P-101,${tag} Cooling,\r\n` +
      `equipment,${tag} P-102,,\r\n` +
      `pump,${tag} P-103,${tag} Cooling,\r\n` +
      `equipment,${tag} P-104,${tag} Nowhere,\r\n` +
      `mainSystem,${tag} Wrong,${tag} Cooling,\r\n` +
      `plant,${tag} plant,,\r\n`;
    const res = await importCsv(csv, { ...kind, dryRun: true });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      kind: "assets",
      proposedMapping: { kind: "kind", name: "name", parent: "parentId", metadata: "metadata" },
      total: 8,
      valid: 3,
      invalid: 5,
    });
    expect(res.body.problems).toEqual([
      expect.objectContaining({ row: 5, column: "parent", field: "body.parentId", rule: "required" }),
      expect.objectContaining({ row: 6, column: "kind", field: "body.kind" }),
      expect.objectContaining({ row: 7, column: "parent", field: "body.parentId", rule: "exists" }),
      // A main system's parent is a plant: the one named is a main system (the rule of POST /Assets).
      expect.objectContaining({ row: 8, column: "parent", field: "body.parentId", rule: "parentKind" }),
      // Plant names are unique ignoring case, an earlier row's plant included.
      expect.objectContaining({ row: 9, column: "name", field: "body.name", rule: "unique" }),
    ]);
    expect(await assetsNamedLike(tag)).toEqual([]);
  });
});

describe("assets: a dry run over more rows than one request checks", () => {
  it("is queued in chunks, and a row sees the assets rows of earlier chunks would create; it writes nothing", async () => {
    const tag = unique("big");
    const lines = ["kind,name,parent", `plant,${tag} Plant,`, `mainSystem,${tag} Cooling,${tag} Plant`];
    // 1,200 pumps under the main system of row 3: chunks of 100 rows, so most name a parent 2 to 12 chunks above them.
    for (let i = 1; i <= 1200; i++) lines.push(`equipment,${tag} P-${i},${tag} Cooling`);
    // A second plant of the first one's name, eleven chunks below it: the unique rule sees it too.
    lines.push(`plant,${tag} PLANT,`);
    // A parent no row makes is still a problem.
    lines.push(`equipment,${tag} Orphan,${tag} Heating`);
    const res = await importCsv(`${lines.join("\r\n")}\r\n`, { ...kind, dryRun: true });
    expect(res.status, res.text).toBe(202);
    const done = await waitForImport(res.body.id as string, 120_000);
    expect(done).toMatchObject({ status: "completed", dryRun: true, total: 1204, processed: 1204, created: 1202, failed: 2 });
    const problems = await call<{ row: number; column: string | null; rule: string }[]>(`/Imports/${done.id}/Problems`);
    expect(problems.status, problems.text).toBe(200);
    expect(problems.body.map((p) => ({ row: p.row, column: p.column, rule: p.rule }))).toEqual([
      { row: 1204, column: "name", rule: "unique" },
      { row: 1205, column: "parent", rule: "exists" },
    ]);
    expect(await assetsNamedLike(tag)).toEqual([]);
  });
});

describe("assets: commit", () => {
  it("writes a plant's tree in file order step by step (its runner's alarms), once when committed twice", async () => {
    const tag = unique("tree");
    const csv =
      "kind,name,parent,plant,metadata\r\n" +
      `plant,${tag} Plant,,,\r\n` +
      `mainSystem,${tag} Cooling,${tag} Plant,,\r\n` +
      `equipment,${tag} P-101,${tag} Cooling,${tag} Plant,"{""tag"":""P-101""}"\r\n` +
      `designObject,${tag} Loop,${tag} Plant,,\r\n`;
    const done = await commitCsv(csv, kind);
    expect(done).toMatchObject({ kind: "assets", status: "completed", total: 4, created: 4, failed: 0 });
    const tree = await assetsNamedLike(tag);
    expect(tree).toHaveLength(4);
    const plant = byName(tree, `${tag} Plant`);
    const cooling = byName(tree, `${tag} Cooling`);
    expect(plant).toMatchObject({ kind: "plant", parentId: null });
    expect(cooling).toMatchObject({ kind: "mainSystem", parentId: plant.id, plant: { id: plant.id } });
    expect(byName(tree, `${tag} P-101`)).toMatchObject({ kind: "equipment", parentId: cooling.id, metadata: { tag: "P-101" } });
    expect(byName(tree, `${tag} Loop`)).toMatchObject({ kind: "designObject", parentId: plant.id });
    const rows = (await call(`/Imports/${done.id}/Rows`)).body as { row: number; entityId: string }[];
    expect(rows.map((r) => r.entityId).sort()).toEqual(tree.map((a) => a.id).sort());

    const again = await commitCsv(csv, kind);
    expect(again).toMatchObject({ status: "completed", created: 0, skipped: 4, failed: 0 });
    expect(await assetsNamedLike(tag)).toHaveLength(4);
  });

  it("a parent name two assets share is a problem; the plant column tells them apart", async () => {
    const tag = unique("twin");
    const north = await createAsset("plant", null, { name: `${tag} North` });
    const south = await createAsset("plant", null, { name: `${tag} South` });
    await createAsset("mainSystem", north.id, { name: `${tag} Cooling` });
    const southCooling = await createAsset("mainSystem", south.id, { name: `${tag} Cooling` });
    const csv =
      "kind,name,parent,plant.name\r\n" +
      `equipment,${tag} P-1,${tag} Cooling,\r\n` +
      `equipment,${tag} P-2,${tag} Cooling,${tag} South\r\n` +
      `equipment,${tag} P-3,${tag} Cooling,${tag} West\r\n`;
    const done = await commitCsv(csv, kind);
    expect(done).toMatchObject({ status: "completed", created: 1, failed: 2 });
    const problems = (await call(`/Imports/${done.id}/Problems`)).body;
    expect(problems).toEqual([
      expect.objectContaining({ row: 2, column: "parent", field: "body.parentId", rule: "ambiguous" }),
      expect.objectContaining({ row: 4, column: "plant.name", field: "body.parentId", rule: "exists" }),
    ]);
    expect(byName(await assetsNamedLike(tag), `${tag} P-2`)).toMatchObject({ parentId: southCooling.id, plant: { id: south.id } });
  });

  it("a row with an id replaces that asset: the file's columns over it, kind and parent as PUT /Assets keeps them", async () => {
    const { plant, equipment } = await createPlantTree();
    const before = (await call<AssetRead>(`/Assets/${equipment.id}`)).body;
    const renamed = unique("renamed");
    const done = await commitCsv(`id,name,metadata\r\n${equipment.id},${renamed},"{""serial"":7}"\r\n${plant.id},,\r\n`, kind);
    // The plant's row changes nothing (its empty cells say nothing): it writes nothing.
    expect(done).toMatchObject({ status: "completed", created: 1, skipped: 1, failed: 0 });
    const after = (await call<AssetRead>(`/Assets/${equipment.id}`)).body;
    expect(after).toEqual({ ...before, name: renamed, metadata: { serial: 7 }, updatedAt: expect.any(String) });
    expect((await call<AssetRead>(`/Assets/${plant.id}`)).body.name).toBe(plant.name);

    const refused = await importCsv(`id,kind,parentId\r\n${equipment.id},designObject,${plant.id}\r\n`, { ...kind, dryRun: true });
    expect(refused.status, refused.text).toBe(200);
    expect(refused.body.problems).toEqual([
      expect.objectContaining({ row: 2, column: "kind", field: "body.kind", rule: "immutable" }),
      expect.objectContaining({ row: 2, column: "parentId", field: "body.parentId", rule: "immutable" }),
    ]);
    const missing = await importCsv(`id,name\r\n${crypto.randomUUID()},x\r\n`, { ...kind, dryRun: true });
    expect(missing.body.problems).toEqual([expect.objectContaining({ row: 2, column: "id", field: "body.id", rule: "exists" })]);
  });

  it("a caller without assets_write may not import assets (403), even with work_write", async () => {
    const res = await importCsv(`kind,name\r\nplant,${unique("denied")}\r\n`, kind, {
      permissions: ["assets_read", "work_write", "work_read"],
    });
    expect(res.status, res.text).toBe(403);
    const dry = await importCsv(`kind,name\r\nplant,${unique("denied")}\r\n`, { ...kind, dryRun: true }, { permissions: ["assets_read"] });
    expect(dry.status).toBe(403);
  });
});

describe("assets: round trip", () => {
  it("an exported list, one name changed and imported back: that change lands, nothing else changes", async () => {
    const { plant, mainSystem, equipment, designObject } = await createPlantTree();
    const second = await createAsset("equipment", mainSystem.id, { metadata: { tag: "E-2" } });
    const list = async () => (await call<AssetRead[]>(`/Assets?parentIds=${mainSystem.id}&order=name`)).body;
    const before = await list();
    expect(before).toHaveLength(3);
    const exported = await call(`/Assets?parentIds=${mainSystem.id}&order=name&format=csv`);
    expect(exported.status, exported.text).toBe(200);
    const renamed = unique("renamed");
    const edited = exported.text.replace(equipment.name as string, renamed);
    expect(edited).not.toBe(exported.text);

    const dry = await importCsv(edited, { ...kind, fileName: "assets.csv", dryRun: true });
    expect(dry.status, dry.text).toBe(200);
    expect(dry.body).toMatchObject({ total: 3, valid: 3, invalid: 0 });
    expect(dry.body.mapping).toMatchObject({ id: "id", name: "name", parentId: "parentId", "parent.id": null, "plant.name": "plant" });

    const done = await commitCsv(edited, { ...kind, fileName: "assets.csv" });
    expect(done).toMatchObject({ status: "completed", total: 3, created: 1, skipped: 2, failed: 0 });
    const after = await list();
    // The rows not edited write nothing: the same assets, the same versions.
    const expected = before.map((a) => (a.id === equipment.id ? { ...a, name: renamed, updatedAt: expect.any(String) } : a));
    expect([...after].sort((a, b) => a.id.localeCompare(b.id))).toEqual([...expected].sort((a, b) => a.id.localeCompare(b.id)));
    expect(byName(after, renamed).id).toBe(equipment.id);
    expect(after.find((a) => a.id === second.id)?.metadata).toEqual({ tag: "E-2" });
    expect(after.find((a) => a.id === designObject.id)?.plant).toEqual({ id: plant.id, name: plant.name });
  });
});
