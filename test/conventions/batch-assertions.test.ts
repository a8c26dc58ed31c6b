import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { assertStatement, isAssertionFailure } from "../../src/pkg/db";

describe("assertStatement", () => {
  const db = env.DB;
  beforeAll(async () => {
    await db.prepare("CREATE TABLE IF NOT EXISTS assertion_probe (v integer)").run();
  });

  it("rolls back every statement of the batch when its condition is false", async () => {
    await db.prepare("DELETE FROM assertion_probe").run();
    const failed = await db
      .batch([
        db.prepare("INSERT INTO assertion_probe VALUES (1)"),
        assertStatement(db, "?1 = 2", 1),
        db.prepare("INSERT INTO assertion_probe VALUES (2)"),
      ])
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(isAssertionFailure(failed)).toBe(true);
    expect((await db.prepare("SELECT count(*) AS n FROM assertion_probe").first<{ n: number }>())?.n).toBe(0);
  });

  it("lets the batch commit when its condition holds", async () => {
    await db.prepare("DELETE FROM assertion_probe").run();
    await db.batch([
      db.prepare("INSERT INTO assertion_probe VALUES (1)"),
      assertStatement(db, "EXISTS (SELECT 1 FROM assertion_probe WHERE v = ?1)", 1),
    ]);
    expect((await db.prepare("SELECT count(*) AS n FROM assertion_probe").first<{ n: number }>())?.n).toBe(1);
  });

  it("fails with its own marker, whatever the batch's other statements are", async () => {
    const failed = await db.batch([assertStatement(db, "?1 = 2", 1)]).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(String(failed)).toContain("integrity-edge-assertion");
    expect(isAssertionFailure(failed)).toBe(true);
  });

  it("does not take a real JSON error inside a guarded batch for a failed assertion", async () => {
    await db.prepare("DELETE FROM assertion_probe").run();
    // The condition holds; a later statement parses malformed JSON (or reads a malformed path) and fails.
    for (const broken of [
      db.prepare("SELECT json(?1)").bind("{not json"),
      db.prepare("SELECT json_extract('{}', ?1)").bind("not-a-path"),
    ]) {
      const failed = await db.batch([assertStatement(db, "?1 = 1", 1), db.prepare("INSERT INTO assertion_probe VALUES (1)"), broken]).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failed).toBeInstanceOf(Error);
      expect(String(failed)).toMatch(/malformed JSON|bad JSON path/);
      expect(isAssertionFailure(failed)).toBe(false);
    }
    expect((await db.prepare("SELECT count(*) AS n FROM assertion_probe").first<{ n: number }>())?.n).toBe(0);
  });

  it("is not mistaken for other failures", async () => {
    const failed = await db
      .prepare("SELECT * FROM no_such_table")
      .all()
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(isAssertionFailure(failed)).toBe(false);
  });
});
