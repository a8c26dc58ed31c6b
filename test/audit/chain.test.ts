/**
 * The audit trail's hash chain (issue 34): the cron seals records in order, and verification names
 * the first record altered or removed in D1.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sealAuditTrail } from "../../src/audit/chain";
import { createLogger } from "../../src/pkg/logger";
import { edited, verification } from "./support";

const log = createLogger("error", {});

describe("the hash chain", () => {
  it("seals records in order; a record altered in D1 fails verification at that record", async () => {
    const id = await edited(2);
    expect((await verification()).unsealed).toBeGreaterThan(0);
    expect(await sealAuditTrail(env, log)).toBeGreaterThan(0);
    const sealed = await verification();
    expect(sealed).toMatchObject({ valid: true, unsealed: 0, broken: null });
    expect(sealed.checked).toBeGreaterThanOrEqual(3);

    const target = await env.DB.prepare("SELECT seq FROM audit_records WHERE entity_id = ?1 AND action = 'updated' ORDER BY seq LIMIT 1")
      .bind(id)
      .first<{ seq: number }>();
    // Someone with access to the database rewrites what was recorded.
    await env.DB.prepare("UPDATE audit_records SET after = json_set(after, '$.description', 'never said') WHERE seq = ?1")
      .bind(target!.seq)
      .run();
    const broken = await verification();
    expect(broken.valid).toBe(false);
    expect(broken.broken).toMatchObject({ sequence: target!.seq });
    expect(broken.broken.problem).toContain("changed");
    // Put back, it verifies again.
    await env.DB.prepare("UPDATE audit_records SET after = json_set(after, '$.description', 'edit 0') WHERE seq = ?1")
      .bind(target!.seq)
      .run();
    expect((await verification()).valid).toBe(true);

    // A record removed (with its seal) breaks the link of the one after it.
    await env.DB.batch([
      env.DB.prepare("DELETE FROM audit_records WHERE seq = ?1").bind(target!.seq),
      env.DB.prepare("DELETE FROM audit_seals WHERE seq = ?1").bind(target!.seq),
    ]);
    const removed = await verification();
    expect(removed.valid).toBe(false);
    expect(removed.broken.sequence).toBe(target!.seq + 1);
    expect(removed.broken.problem).toContain("missing");
  });
});
