/**
 * One table of references (src/db/references.ts): every column of the schema that looks like a
 * reference to another row (a declared foreign key, a name ending in _id or _ref, a status) is either
 * counted by the shared in-use checks (USAGE), checked by its target's own delete (OWN_CHECKS), or
 * named as no usage with a reason (NOT_USAGE). A new column fails here until someone decides which.
 */
import { is } from "drizzle-orm";
import { getTableConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import * as schema from "../../src/db/schema";
import { NOT_USAGE, OWN_CHECKS, USAGE } from "../../src/db/references";
import { call } from "../support/http";
import { createEntityType, createUserStatus } from "../support/factories/types";

interface Column {
  key: string;
  foreignKey: string | null;
}

function referenceLikeColumns(): { all: Set<string>; candidates: Column[] } {
  const all = new Set<string>();
  const candidates: Column[] = [];
  for (const value of Object.values(schema)) {
    if (!is(value, SQLiteTable)) continue;
    const config = getTableConfig(value);
    const targets = new Map<string, string>();
    for (const fk of config.foreignKeys) {
      const reference = fk.reference();
      reference.columns.forEach((column, i) =>
        targets.set(column.name, `${getTableConfig(reference.foreignTable).name}.${reference.foreignColumns[i]!.name}`),
      );
    }
    for (const column of config.columns) {
      const key = `${config.name}.${column.name}`;
      all.add(key);
      if (column.primary) continue;
      if (targets.has(column.name) || /_(id|ref)$/.test(column.name) || column.name === "status") {
        candidates.push({ key, foreignKey: targets.get(column.name) ?? null });
      }
    }
  }
  return { all, candidates };
}

const usage = new Map<string, string>(
  Object.entries(USAGE).flatMap(([entity, refs]) => refs.map((r) => [`${r.table}.${r.column}`, entity] as [string, string])),
);

describe("the table of references", () => {
  const { all, candidates } = referenceLikeColumns();

  it("finds the schema's columns", () => {
    expect(candidates.length).toBeGreaterThan(100);
  });

  it("classifies every reference-like column exactly once", () => {
    const unclassified: string[] = [];
    const twice: string[] = [];
    for (const { key } of candidates) {
      const places = [usage.has(key), key in OWN_CHECKS, key in NOT_USAGE].filter(Boolean).length;
      if (places === 0) unclassified.push(key);
      if (places > 1) twice.push(key);
    }
    expect(unclassified, "add these columns to USAGE, OWN_CHECKS or NOT_USAGE in src/db/references.ts").toEqual([]);
    expect(twice).toEqual([]);
  });

  it("names only columns that exist", () => {
    const named = [...usage.keys(), ...Object.keys(OWN_CHECKS), ...Object.keys(NOT_USAGE)];
    expect(named.filter((key) => !all.has(key))).toEqual([]);
  });

  it("counts every declared foreign key to an entity type or a user status, except the type's own links", () => {
    const expected = { "entity_types.id": "entityType", "user_statuses.id": "userStatus" } as Record<string, string>;
    for (const { key, foreignKey } of candidates) {
      if (!foreignKey || !(foreignKey in expected) || key === "entity_type_properties.entity_type_id") continue;
      expect(usage.get(key), key).toBe(expected[foreignKey]);
    }
  });

  it("gives every exclusion a reason", () => {
    for (const [key, reason] of [...Object.entries(OWN_CHECKS), ...Object.entries(NOT_USAGE)])
      expect(reason.length, key).toBeGreaterThan(10);
  });
});

describe("the shared in-use checks read it", () => {
  it("an entity type or a user status a work template uses cannot be deleted", async () => {
    const type = await createEntityType({ appliesTo: null });
    const status = await createUserStatus();
    const template = await call("/WorkTemplates", {
      method: "POST",
      body: { displayName: `Uses a type ${crypto.randomUUID()}`, typeId: type.id, status: status.id },
    });
    expect(template.status, template.text).toBe(201);
    const typeDelete = await call(`/EntityTypes/${type.id}`, { method: "DELETE" });
    expect(typeDelete.status, typeDelete.text).toBe(409);
    expect(typeDelete.body.code).toBe("InUse");
    const statusDelete = await call(`/UserStatuses/${status.id}`, { method: "DELETE" });
    expect(statusDelete.status, statusDelete.text).toBe(409);
    expect(statusDelete.body.code).toBe("InUse");
    expect((await call(`/WorkTemplates/${template.body.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await call(`/EntityTypes/${type.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await call(`/UserStatuses/${status.id}`, { method: "DELETE" })).status).toBe(204);
  });
});
