/**
 * The audit trail's archive (issue 34): records past the retention move to R2 by day, and read back
 * as they were through every read (a file of its own: the chain test breaks the chain on purpose).
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { archiveAuditTrail } from "../../src/audit/archive";
import { sealAuditTrail } from "../../src/audit/chain";
import { createLogger } from "../../src/pkg/logger";
import { call } from "../support/http";
import { edited, verification } from "./support";

const log = createLogger("error", {});
const DAY = 24 * 60 * 60 * 1000;

describe("the archive", () => {
  it("moves old records to R2 by day; history, the trail and verification read them back the same", async () => {
    const id = await edited(2);
    await sealAuditTrail(env, log);
    const before = (await call(`/Deviations/${id}/History`)).body;
    const trailBefore = (await call(`/AuditTrail?entityIds=${id}&includeTotal=true`)).body;
    expect(before).toHaveLength(3);
    const inD1 = async () => (await env.DB.prepare("SELECT count(*) AS n FROM audit_records").first<{ n: number }>())!.n;
    expect(await inD1()).toBeGreaterThan(0);

    // The cron, a year later: everything is past the retention (90 days by default).
    const moved = await archiveAuditTrail(env, new Date(Date.now() + 365 * DAY), log);
    expect(moved).toBeGreaterThanOrEqual(3);
    expect(await inD1()).toBe(0);
    const segments = await env.DB.prepare("SELECT object_key, records FROM audit_segments").all<{ object_key: string; records: number }>();
    expect(segments.results.length).toBeGreaterThan(0);
    expect(await env.AUDIT_ARCHIVE.head(segments.results[0]!.object_key)).not.toBeNull();

    expect((await call(`/Deviations/${id}/History`)).body).toEqual(before);
    expect((await call(`/AuditTrail?entityIds=${id}&includeTotal=true`)).body).toEqual(trailBefore);
    expect((await call(`/Deviations/${id}/History?skip=2`)).body).toEqual(before.slice(2));
    expect(await verification()).toMatchObject({ valid: true, broken: null });

    // The next change after archiving still knows the state before it (the archive's last state of the entity).
    const read = (await call(`/Deviations/${id}`)).body;
    expect((await call("/Deviations", { method: "PUT", body: { ...read, description: "after the archive" } })).status).toBe(200);
    const [latest] = (await call(`/Deviations/${id}/History?take=1`)).body;
    expect(latest.changes.filter((c: { path: string }) => c.path !== "/updatedAt")).toEqual([
      { path: "/description", before: "edit 1", after: "after the archive" },
    ]);
    await sealAuditTrail(env, log);
    expect(await verification()).toMatchObject({ valid: true, broken: null });
  });

  it("an archived segment altered in R2 fails verification, naming it", async () => {
    await edited(1);
    await sealAuditTrail(env, log);
    await archiveAuditTrail(env, new Date(Date.now() + 365 * DAY), log);
    const segment = await env.DB.prepare("SELECT object_key, first_seq FROM audit_segments ORDER BY first_seq DESC LIMIT 1").first<{
      object_key: string;
      first_seq: number;
    }>();
    const object = await env.AUDIT_ARCHIVE.get(segment!.object_key);
    const { gunzipSync, gzipSync, strFromU8, strToU8 } = await import("fflate");
    const lines = strFromU8(gunzipSync(new Uint8Array(await object!.arrayBuffer())))
      .trim()
      .split("\n");
    const first = JSON.parse(lines[0]!) as Record<string, unknown>;
    lines[0] = JSON.stringify({ ...first, actor_name: "Someone else" });
    await env.AUDIT_ARCHIVE.put(segment!.object_key, gzipSync(strToU8(`${lines.join("\n")}\n`)));
    const result = await verification();
    expect(result.valid).toBe(false);
    expect(result.broken.sequence).toBe(segment!.first_seq);
  });
});
