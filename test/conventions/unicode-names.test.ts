/**
 * One rule for every unique name (docs/decisions.md, "Unique names"): names are compared after NFC
 * normalisation and Unicode case folding, while the stored name stays byte for byte as sent.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { keyLegacyNames, NAME_KEY_STEP, runNameKeyBackfill } from "../../src/pkg/name-keys";
import { createLogger } from "../../src/pkg/logger";
import { nameKey } from "../../src/pkg/unicode";
import { call } from "../support/http";

interface Resource {
  path: string;
  field: string;
  body: (name: string) => Record<string, unknown>;
  /** How to send the name back in a PUT (the resource's own body, read with GET). */
  put?: boolean;
}

const RESOURCES: Resource[] = [
  { path: "/Categories", field: "name", body: (name) => ({ name }), put: true },
  { path: "/Classifications", field: "name", body: (name) => ({ name, format: "valueHierarchy" }) },
  { path: "/EntityTypes", field: "name", body: (name) => ({ name, appliesTo: "WorkItem" }) },
  { path: "/DeviationTypes", field: "name", body: (name) => ({ name }) },
  { path: "/UserStatuses", field: "name", body: (name) => ({ name, status: "onHold" }) },
  { path: "/DataTypes", field: "name", body: (name) => ({ name, allowedExtensions: ["csv"] }) },
  { path: "/ActivityTypes", field: "name", body: (name) => ({ name }) },
  { path: "/OutputTypes", field: "name", body: (name) => ({ name, schema: null }) },
  { path: "/Assets", field: "name", body: (name) => ({ name, kind: "plant" }) },
  { path: "/Deviations", field: "referenceId", body: (referenceId) => ({ referenceId }) },
  // Image names are lower-case ASCII (`external/...`); the folded key still makes `External/X` and `external/x` one.
];

const nfc = (tag: string) => `Ünïcødé ${tag}`;
const lowerNfc = (tag: string) => `ünïcødé ${tag}`;
const nfd = (tag: string) => `U\u0308nïcødé ${tag}`;

describe("unique names: NFC and Unicode case folding", () => {
  it("the key folds case beyond ASCII and normalises", () => {
    expect(nameKey("Ünïcødé")).toBe(nameKey("ünïcødé"));
    expect(nameKey("U\u0308nïcødé")).toBe(nameKey("Ünïcødé"));
    expect(nameKey("STRASSE")).toBe(nameKey("Straße"));
    expect(nameKey("ΣΊΣΥΦΟΣ")).toBe(nameKey("σίσυφος"));
    expect(nameKey("Pump A")).toBe("pump a");
    expect(nameKey("pump a")).not.toBe(nameKey("pump b"));
  });

  for (const resource of RESOURCES) {
    it(`${resource.path}: names differing only in non-ASCII case or normal form are one name, stored as sent`, async () => {
      const tag = crypto.randomUUID().slice(0, 8);
      const first = await call(resource.path, { method: "POST", body: resource.body(nfc(tag)) });
      expect(first.status, first.text).toBe(201);
      expect(first.body[resource.field]).toBe(nfc(tag));
      for (const name of [lowerNfc(tag), nfd(tag), nfc(tag).toUpperCase()]) {
        const dup = await call(resource.path, { method: "POST", body: resource.body(name) });
        expect(dup.status, `${resource.path} ${JSON.stringify(name)}: ${dup.text}`).toBe(409);
      }
      const other = await call(resource.path, { method: "POST", body: resource.body(nfd(`other ${tag}`)) });
      expect(other.status, other.text).toBe(201);
      // Stored and returned byte for byte: the decomposed spelling stays decomposed.
      expect(other.body[resource.field]).toBe(nfd(`other ${tag}`));
      const read = await call(`${resource.path}/${other.body.id}`);
      expect(read.body[resource.field]).toBe(nfd(`other ${tag}`));
      if (resource.put) {
        const renamed = await call(resource.path, { method: "PUT", body: { id: read.body.id, [resource.field]: lowerNfc(tag) } });
        expect(renamed.status, renamed.text).toBe(409);
      }
    });
  }

  it("plantNames filters match the same way", async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    const plant = await call("/Assets", { method: "POST", body: { name: nfc(tag), kind: "plant" } });
    const eq = await call("/Assets", { method: "POST", body: { name: `pump ${tag}`, kind: "equipment", parentId: plant.body.id } });
    const found = await call(`/Assets?plantNames=${encodeURIComponent(nfd(tag).toLowerCase())}&kinds=equipment`);
    expect(found.body.map((a: { id: string }) => a.id)).toEqual([eq.body.id]);
  });

  it("rows written before keys existed are keyed by the minute cron", async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    const created = await call("/Categories", { method: "POST", body: { name: nfc(tag) } });
    await env.DB.prepare("UPDATE categories SET name_key = NULL WHERE id = ?1").bind(created.body.id).run();
    // Unkeyed, the duplicate is not caught...
    expect((await call("/Categories", { method: "POST", body: { name: lowerNfc(`x${tag}`) } })).status).toBe(201);
    await keyLegacyNames(env, createLogger("error", {}));
    const row = await env.DB.prepare("SELECT name_key FROM categories WHERE id = ?1").bind(created.body.id).first<{ name_key: string }>();
    expect(row?.name_key).toBe(nameKey(nfc(tag)));
    // ...and once keyed it is.
    expect((await call("/Categories", { method: "POST", body: { name: nfd(tag) } })).status).toBe(409);
  });

  it("keying them is a one-off step: the cron runs it while it is pending, then never again", async () => {
    const step = () =>
      env.DB.prepare("SELECT state, cursor FROM one_off_steps WHERE name = ?1")
        .bind(NAME_KEY_STEP)
        .first<{ state: string; cursor: string | null }>();
    // A new database has nothing to key: migration 0015 records the step done.
    expect((await step())?.state).toBe("done");
    const tag = crypto.randomUUID().slice(0, 8);
    const legacy = await call("/Categories", { method: "POST", body: { name: nfc(tag) } });
    const later = await call("/Categories", { method: "POST", body: { name: nfc(`later ${tag}`) } });
    await env.DB.prepare("UPDATE categories SET name_key = NULL WHERE id = ?1").bind(legacy.body.id).run();
    // As migration 0015 finds a database with unkeyed names.
    await env.DB.prepare("UPDATE one_off_steps SET state = 'pending', cursor = NULL WHERE name = ?1").bind(NAME_KEY_STEP).run();
    const log = createLogger("error", {});
    await runNameKeyBackfill(env, log, new Date());
    const keyOf = async (id: string) =>
      (await env.DB.prepare("SELECT name_key FROM categories WHERE id = ?1").bind(id).first<{ name_key: string | null }>())?.name_key;
    expect(await keyOf(legacy.body.id)).toBe(nameKey(nfc(tag)));
    const done = await step();
    expect(done?.state).toBe("done");
    expect(JSON.parse(done!.cursor!)).toHaveLength(12);
    // Done means done: a NULL key appearing later is not the step's business any more.
    await env.DB.prepare("UPDATE categories SET name_key = NULL WHERE id = ?1").bind(later.body.id).run();
    await runNameKeyBackfill(env, log, new Date());
    expect(await keyOf(later.body.id)).toBeNull();
    await env.DB.prepare("UPDATE categories SET name_key = ?2 WHERE id = ?1")
      .bind(later.body.id, nameKey(nfc(`later ${tag}`)))
      .run();
  });

  it("the step moves past a pair that folds to one key, logging it once, and finishes", async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    const first = await call("/Categories", { method: "POST", body: { name: nfc(tag) } });
    await env.DB.prepare("UPDATE categories SET name_key = NULL WHERE id = ?1").bind(first.body.id).run();
    const second = await call("/Categories", { method: "POST", body: { name: lowerNfc(tag) } });
    expect(second.status).toBe(201);
    await env.DB.prepare("UPDATE categories SET name_key = NULL WHERE id = ?1").bind(second.body.id).run();
    const warnings: string[] = [];
    const log = { ...createLogger("error", {}), warn: (message: string) => void warnings.push(message) };
    const first1 = await keyLegacyNames(env, log);
    expect(first1.finished).toBe(true);
    expect(warnings).toHaveLength(1);
    // From its cursor on, the next pass has nothing left to try.
    const again = await keyLegacyNames(env, log, first1.cursor);
    expect(again.finished).toBe(true);
    expect(warnings).toHaveLength(1);
  });
});
