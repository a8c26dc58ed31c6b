/**
 * Issue 37, "Batch": POST /$batch runs its operations through the app's own routes, in order, one
 * result per operation (status, ETag and Location, body or problem); a later operation uses an earlier
 * one's answer; a failed one stops the rest or not, as the request says; with an Idempotency-Key a
 * retry replays every result and repeats no write, also when the first try was cut off half-way.
 */
import { createExecutionContext, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { IdempotencyStore, StoredResponse } from "../../durable-objects/idempotency-store";
import { createApp } from "../../src/app";
import { headFingerprint } from "../../src/pkg/body-fingerprint";
import { MAX_OPERATIONS } from "../../src/batch/schema";
import { PERMISSIONS } from "../../src/pkg/permissions";
import { outboxFor } from "../support/factories/properties";
import { call, tokenFor } from "../support/http";
import { configBody, owner } from "../dataprocessing/support";

type Options = { headers?: Record<string, string>; user?: { id?: string; permissions?: readonly string[] } };
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read bodies loosely
const batch = (body: unknown, options: Options = {}) => call<any>("/$batch", { method: "POST", body, ...options });

/** The id of the default test user (test/support/http.ts). */
const USER = "00000000-0000-4000-8000-00000000aaaa";

const unique = (prefix: string) => `${prefix} ${crypto.randomUUID().slice(0, 8)}`;

/** How many deviations have this description (each test writes its own). */
async function deviationsDescribed(description: string): Promise<number> {
  const row = await env.DB.prepare("SELECT COUNT(*) AS n FROM deviations WHERE description = ?1").bind(description).first<{ n: number }>();
  return row!.n;
}

const createDeviation = (id: string, description: string, extra: Record<string, unknown> = {}) => ({
  id,
  method: "POST",
  path: "/Deviations",
  body: { description, ...extra },
});

describe("POST /$batch: operations and references", () => {
  it("creates a deviation and a work item and links them, the link using both answers' ids", async () => {
    const description = unique("Corrosion under insulation on P-101");
    const requestId = `batch-${crypto.randomUUID()}`;
    const res = await batch(
      {
        operations: [
          createDeviation("deviation", description),
          { id: "work", method: "POST", path: "/WorkItems", body: { displayName: "Follow up CUI on P-101" } },
          { id: "link", method: "POST", path: "/Deviations/{{deviation.body.id}}/WorkItems/{{work.body.id}}" },
          { id: "read", method: "GET", path: "/Deviations/{{deviation.body.id}}/WorkItems" },
        ],
      },
      { headers: { "x-request-id": requestId, "audit-reason": "turnaround 2026 findings" } },
    );
    expect(res.status, res.text).toBe(200);
    const [deviation, work, link, read] = res.body.results;
    expect(deviation).toMatchObject({ id: "deviation", ran: true, status: 201, body: { description } });
    expect(deviation.headers.location).toBe(`/Deviations/${deviation.body.id}`);
    expect(deviation.headers.etag).toMatch(/^"/);
    expect(work).toMatchObject({ id: "work", ran: true, status: 201 });
    expect(link.ran).toBe(true);
    expect(link.status, JSON.stringify(link)).toBeLessThan(300);
    expect(read.status).toBe(200);
    expect(read.body.map((w: { id: string }) => w.id)).toEqual([work.body.id]);
    // The same events as single requests: the batch goes through the routes, which write them.
    expect((await outboxFor(deviation.body.id)).map((e) => e.action)).toContain("created");
    // Each operation's audit records: its request id is the batch's and its place, the reason the batch's.
    const audit = await env.DB.prepare("SELECT entity_id, reason FROM audit_records WHERE request_id = ?1")
      .bind(`${requestId}.1`)
      .all<{ entity_id: string; reason: string }>();
    expect(audit.results).toEqual([{ entity_id: deviation.body.id, reason: "turnaround 2026 findings" }]);
  });

  it("takes a whole-string reference with its JSON type, and text references inside longer text", async () => {
    const description = unique("Leak at the flange");
    const res = await batch({
      operations: [
        createDeviation("d", description, { metadata: { source: "round 12" } }),
        createDeviation("copy", "{{d.body.description}} (copy of {{d.body.referenceId}})", { metadata: "{{d.body.metadata}}" }),
      ],
    });
    expect(res.status, res.text).toBe(200);
    const [d, copy] = res.body.results;
    expect(copy.status, JSON.stringify(copy)).toBe(201);
    expect(copy.body.description).toBe(`${description} (copy of ${d.body.referenceId})`);
    expect(copy.body.metadata).toEqual({ source: "round 12" });
  });

  it("honours If-Match per operation: the ETag of an earlier answer passes, a stale one is a 412", async () => {
    const description = unique("Paint blistering");
    const res = await batch({
      operations: [
        createDeviation("d", description),
        {
          id: "edit",
          method: "PUT",
          path: "/Deviations",
          headers: { "If-Match": "{{d.headers.etag}}" },
          body: { id: "{{d.body.id}}", description: `${description}, spreading` },
        },
        {
          id: "stale",
          method: "PUT",
          path: "/Deviations",
          headers: { "If-Match": "{{d.headers.etag}}" },
          body: { id: "{{d.body.id}}", description: `${description}, stale` },
        },
        { id: "read", method: "GET", path: "/Deviations/{{d.body.id}}" },
      ],
      onFailure: "continue",
    });
    expect(res.status, res.text).toBe(200);
    const [d, edit, stale, read] = res.body.results;
    expect(edit.status, JSON.stringify(edit)).toBe(200);
    expect(edit.headers.etag).not.toBe(d.headers.etag);
    expect(stale.status).toBe(412);
    expect(stale.body).toMatchObject({ code: "PreconditionFailed", status: 412 });
    expect(read.body.description).toBe(`${description}, spreading`);
    expect(read.headers.etag).toBe(edit.headers.etag);
  });

  it("answers each operation's validation problem, naming its field, and changes nothing for it", async () => {
    const res = await batch({
      operations: [{ id: "bad", method: "POST", path: "/Deviations", body: { description: 42 } }],
      onFailure: "continue",
    });
    expect(res.status, res.text).toBe(200);
    const [bad] = res.body.results;
    expect(bad).toMatchObject({ ran: true, status: 400, body: { code: "ValidationFailed" } });
    expect(bad.headers["content-type"]).toContain("application/problem+json");
    expect(bad.body.errors.map((e: { field: string }) => e.field)).toContain("body.description");
  });

  it("checks each operation's permission as its route does: a refused one is a 403, the others run", async () => {
    const description = unique("Refused");
    const user = { id: `reader-${crypto.randomUUID().slice(0, 8)}`, permissions: [PERMISSIONS.workRead] };
    const res = await batch(
      {
        operations: [
          { id: "list", method: "GET", path: "/Deviations?take=1" },
          createDeviation("write", description),
          { id: "again", method: "GET", path: "/Deviations?take=1" },
        ],
        onFailure: "continue",
      },
      { user },
    );
    expect(res.status, res.text).toBe(200);
    const [list, write, again] = res.body.results;
    expect(list.status).toBe(200);
    expect(write).toMatchObject({ ran: true, status: 403, body: { code: "Forbidden" } });
    expect(write.body.detail).toContain(PERMISSIONS.workWrite);
    expect(again.status).toBe(200);
    expect(await deviationsDescribed(description)).toBe(0);
  });
});

describe("POST /$batch: rate limits", () => {
  it("counts each operation against the caller's rate limit, as a single request", async () => {
    const user = `limited-${crypto.randomUUID()}`;
    const description = unique("Limited");
    const ctx = createExecutionContext();
    // TEST_LIMITER lets 3 requests of a user through: the batch itself and its first two operations.
    const res = await createApp().fetch(
      new Request("https://api.test/$batch", {
        method: "POST",
        headers: { authorization: `Bearer ${await tokenFor({ id: user })}`, "content-type": "application/json" },
        body: JSON.stringify({
          operations: [createDeviation("a", description), createDeviation("b", description), createDeviation("c", description)],
          onFailure: "continue",
        }),
      }),
      { ...env, RATE_LIMITS: "on", WRITE_LIMITER: env.TEST_LIMITER, READ_LIMITER: env.TEST_LIMITER },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(200);
    const { results } = (await res.json()) as { results: { status: number; body: { code?: string } }[] };
    expect(results.map((r) => r.status)).toEqual([201, 201, 429]);
    expect(results[2]!.body.code).toBe("TooManyRequests");
    expect(await deviationsDescribed(description)).toBe(2);
  });
});

describe("POST /$batch: a failed operation stops the rest, or not", () => {
  const failing = (referenceId: string, description: string) => ({
    operations: [
      createDeviation("first", description, { referenceId }),
      createDeviation("duplicate", description, { referenceId }),
      createDeviation("after", description),
      { id: "uses", method: "GET", path: "/Deviations/{{duplicate.body.id}}" },
    ],
  });

  it("stop (the default): the operations after the failed one are not run, each a 424 saying why", async () => {
    const description = unique("Stop");
    const res = await batch(failing(`DEV-${crypto.randomUUID()}`, description));
    expect(res.status, res.text).toBe(200);
    const [first, duplicate, after, uses] = res.body.results;
    expect(first.status).toBe(201);
    expect(duplicate).toMatchObject({ ran: true, status: 409 });
    for (const notRun of [after, uses]) {
      expect(notRun).toMatchObject({ ran: false, status: 424, body: { code: "FailedDependency", status: 424 } });
      expect(notRun.body.detail).toContain("'duplicate' answered 409");
    }
    expect(await deviationsDescribed(description)).toBe(1);
  });

  it("continue: every operation runs; one that refers to the failed one's answer is a 424", async () => {
    const description = unique("Continue");
    const res = await batch({ ...failing(`DEV-${crypto.randomUUID()}`, description), onFailure: "continue" });
    expect(res.status, res.text).toBe(200);
    const [first, duplicate, after, uses] = res.body.results;
    expect([first.status, duplicate.status, after.status]).toEqual([201, 409, 201]);
    expect(uses).toMatchObject({ ran: false, status: 424, body: { code: "FailedDependency" } });
    expect(uses.body.errors[0]).toMatchObject({ field: "body.operations.3.path", rule: "reference" });
    expect(await deviationsDescribed(description)).toBe(2);
  });

  it("a reference to a field the answer lacks is a 400 for that operation, which does not run", async () => {
    const res = await batch({
      operations: [createDeviation("d", unique("Missing field")), { id: "x", method: "GET", path: "/Deviations/{{d.body.nothing}}" }],
    });
    expect(res.body.results[1]).toMatchObject({ ran: false, status: 400, body: { code: "ValidationFailed" } });
    expect(res.body.results[1].body.errors[0]).toMatchObject({ field: "body.operations.1.path", rule: "reference" });
  });
});

describe("POST /$batch: the batch itself", () => {
  it("is refused whole (400, nothing run) for a reference to a later or unknown operation, a repeated id, a forbidden header", async () => {
    const description = unique("Never written");
    const res = await batch({
      operations: [
        createDeviation("a", description),
        { id: "b", method: "GET", path: "/Deviations/{{c.body.id}}" },
        { id: "c", method: "GET", path: "/Deviations/{{a.nothing}}" },
        createDeviation("a", description),
        { id: "d", method: "GET", path: "/Deviations", headers: { Authorization: "Bearer someone-else" } },
        { id: "e", method: "GET", path: "https://elsewhere.example/Deviations" },
      ],
    });
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe("ValidationFailed");
    const problems = res.body.errors.map((e: { field: string; rule: string }) => `${e.field} ${e.rule}`);
    expect(problems).toEqual([
      "body.operations.1.path reference",
      "body.operations.2.path reference",
      "body.operations.3.id unique",
      "body.operations.4.headers.Authorization headerNotAllowed",
      "body.operations.5.path format",
    ]);
    expect(await deviationsDescribed(description)).toBe(0);
  });

  it("refuses a nested batch, in any spelling of its path", async () => {
    for (const path of ["/$batch", "/%24BATCH/", "/$Batch?x=1"]) {
      const res = await batch({ operations: [{ id: "inner", method: "POST", path, body: { operations: [] } }] });
      expect(res.status, path).toBe(400);
      expect(res.body.errors).toEqual([expect.objectContaining({ field: "body.operations.0.path", rule: "nestedBatch" })]);
    }
  });

  it(`takes at most ${MAX_OPERATIONS} operations and the JSON body limit: beyond is a 413, nothing run`, async () => {
    const description = unique("Too many");
    const operations = Array.from({ length: MAX_OPERATIONS + 1 }, (_, i) => createDeviation(`op${i}`, description));
    const tooMany = await batch({ operations });
    expect(tooMany.status).toBe(413);
    expect(tooMany.body).toMatchObject({ code: "PayloadTooLarge" });
    expect(tooMany.body.detail).toContain(String(MAX_OPERATIONS));
    expect(await deviationsDescribed(description)).toBe(0);

    const tooLarge = await batch({ operations: [createDeviation("big", "x".repeat(1024 * 1024))] });
    expect(tooLarge.status).toBe(413);
  });

  it(`runs ${MAX_OPERATIONS} operations, one after another`, async () => {
    const description = unique("Hundred");
    const operations = Array.from({ length: MAX_OPERATIONS }, (_, i) => createDeviation(`op${i}`, description));
    const started = Date.now();
    const res = await batch({ operations });
    const ms = Date.now() - started;
    expect(res.status, res.text).toBe(200);
    expect(res.body.results.every((r: { status: number }) => r.status === 201)).toBe(true);
    expect(await deviationsDescribed(description)).toBe(MAX_OPERATIONS);
    console.log(`batch of ${MAX_OPERATIONS} deviation creates: ${ms} ms`);
  });

  it("gives answers back up to 1 MiB in all; one past it is omitted (body null, bodyOmitted tooLarge), having run", async () => {
    const notes = "x".repeat(60_000);
    const reads = Array.from({ length: 20 }, (_, i) => ({ id: `read${i}`, method: "GET", path: "/Deviations/{{d.body.id}}" }));
    const res = await batch({
      operations: [
        createDeviation("d", unique("Long"), { metadata: { notes } }),
        ...reads,
        { id: "small", method: "GET", path: "/Deviations/{{d.body.id}}/WorkItems" },
      ],
    });
    expect(res.status, res.text.slice(0, 500)).toBe(200);
    const results = res.body.results as { status: number; body: { metadata?: { notes: string } } | null; bodyOmitted?: string }[];
    expect(results.every((r) => r.status < 300)).toBe(true);
    const given = results.slice(0, 21).filter((r) => r.body !== null);
    const omitted = results.slice(0, 21).filter((r) => r.body === null);
    // About 17 answers of 61 kB fit in 1 MiB: the first ones are given, every one after is omitted.
    expect(given.length).toBeGreaterThan(12);
    expect(given.length).toBeLessThan(21);
    expect(results.slice(0, given.length)).toEqual(given);
    expect(given.every((r) => r.body!.metadata!.notes === notes)).toBe(true);
    expect(omitted.every((r) => r.bodyOmitted === "tooLarge")).toBe(true);
    expect(results[21]).toMatchObject({ status: 200, body: [] });
  });

  it("is refused without a valid token (401), and runs nothing", async () => {
    const description = unique("Anonymous");
    const res = await call("/$batch", { method: "POST", anonymous: true, body: { operations: [createDeviation("a", description)] } });
    expect(res.status).toBe(401);
    expect(await deviationsDescribed(description)).toBe(0);
  });

  it("keeps the original client's bulk call working inside a batch and out: POST /signals/bulk is one operation", async () => {
    const res = await batch({ operations: [{ id: "bulk", method: "POST", path: "/signals/bulk", body: [] }] });
    expect(res.status, res.text).toBe(200);
    const alone = await call("/signals/bulk", { method: "POST", body: [] });
    expect(res.body.results[0].status).toBe(alone.status);
  });
});

describe("POST /$batch with an Idempotency-Key", () => {
  it("replays every result on a retry and repeats no write", async () => {
    const description = unique("Replayed");
    const key = `batch-${crypto.randomUUID()}`;
    const body = {
      operations: [
        createDeviation("a", description),
        createDeviation("b", description),
        { id: "read", method: "GET", path: "/Deviations/{{a.body.id}}" },
      ],
    };
    const first = await batch(body, { headers: { "idempotency-key": key } });
    expect(first.status, first.text).toBe(200);
    const again = await batch(body, { headers: { "idempotency-key": key } });
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.text).toBe(first.text);
    expect(await deviationsDescribed(description)).toBe(2);
    // The same key with another batch is the usual 422.
    const other = await batch({ operations: [createDeviation("a", description)] }, { headers: { "idempotency-key": key } });
    expect(other.status).toBe(422);
  });

  it("a retry of a batch cut off half-way replays the operations that ran and runs the rest, each once", async () => {
    const description = unique("Cut off");
    const key = `batch-${crypto.randomUUID()}`;
    const body = {
      operations: [
        createDeviation("one", description),
        createDeviation("two", description),
        createDeviation("three", description),
        {
          id: "edit",
          method: "PUT",
          path: "/Deviations",
          headers: { "if-match": "{{one.headers.etag}}" },
          body: { id: "{{one.body.id}}", description },
        },
      ],
    };
    // The link drops once operation "two" has ended (its answer kept): the client is gone, the batch stops.
    const link = new AbortController();
    const store = env.IDEMPOTENCY;
    const watched = {
      idFromName: (name: string) => store.idFromName(name),
      get(id: DurableObjectId) {
        const stub = store.get(id) as unknown as IdempotencyStore;
        return {
          begin: (...args: Parameters<IdempotencyStore["begin"]>) => stub.begin(...args),
          release: (...args: Parameters<IdempotencyStore["release"]>) => stub.release(...args),
          async complete(...args: Parameters<IdempotencyStore["complete"]>) {
            await stub.complete(...args);
            if (args[0] === `${key} two`) link.abort();
          },
        };
      },
    };
    const cut = await createApp().fetch(
      new Request("https://api.test/$batch", {
        method: "POST",
        headers: { authorization: `Bearer ${await tokenFor()}`, "content-type": "application/json", "idempotency-key": key },
        body: JSON.stringify(body),
        signal: link.signal,
      }),
      Object.create(env, { IDEMPOTENCY: { value: watched } }) as typeof env,
    );
    expect(cut.status).toBe(400);
    expect(await deviationsDescribed(description)).toBe(2);

    // The retry, on a good link: one and two are replayed (not created again), three and edit run.
    const retry = await batch(body, { headers: { "idempotency-key": key } });
    expect(retry.status, retry.text).toBe(200);
    const [one, two, three, edit] = retry.body.results;
    expect([one.status, two.status, three.status, edit.status]).toEqual([201, 201, 201, 200]);
    expect(await deviationsDescribed(description)).toBe(3);
    expect((await outboxFor(one.body.id)).map((e) => e.action)).toEqual(["created", "updated"]);
    expect((await outboxFor(two.body.id)).map((e) => e.action)).toEqual(["created"]);
    // Now finished, the whole answer is kept: a third send replays it.
    const replay = await batch(body, { headers: { "idempotency-key": key } });
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.text).toBe(retry.text);
  });

  it("keeps no answer of a batch whose operation a retry may mend (409 with Retry-After): the retry runs it and the rest", async () => {
    const description = unique("Mended");
    const name = unique("Category");
    const key = `batch-${crypto.randomUUID()}`;
    const busyKey = `busy-${crypto.randomUUID()}`;
    // Another request of this user holds busyKey (its body still arriving), so an operation using it is told to retry.
    const store = env.IDEMPOTENCY.get(env.IDEMPOTENCY.idFromName(USER)) as unknown as IdempotencyStore;
    const claim = await store.claim(busyKey, await headFingerprint("POST", "/Categories"), 60_000);
    if (claim.outcome !== "proceed") throw new Error("the key was not free");
    const body = {
      operations: [
        createDeviation("before", description),
        { id: "category", method: "POST", path: "/Categories", headers: { "idempotency-key": busyKey }, body: { name } },
        createDeviation("after", description),
      ],
    };
    const first = await batch(body, { headers: { "idempotency-key": key } });
    expect(first.status, first.text).toBe(200);
    expect(first.body.results.map((r: { status: number }) => r.status)).toEqual([201, 409, 424]);
    expect(first.body.results[1].headers["retry-after"]).toBe("1");

    await store.releaseClaim(busyKey, claim.token);
    const retry = await batch(body, { headers: { "idempotency-key": key } });
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    expect(retry.body.results.map((r: { status: number }) => r.status)).toEqual([201, 201, 201]);
    expect(retry.body.results[0].body.id).toBe(first.body.results[0].body.id);
    expect(await deviationsDescribed(description)).toBe(2);
  });

  it("passes an operation's own Idempotency-Key to its route: a write a phone sent before is replayed, not repeated", async () => {
    const name = unique("Queued category");
    const key = `category-${crypto.randomUUID()}`;
    const single = await call("/Categories", { method: "POST", body: { name }, headers: { "idempotency-key": key } });
    expect(single.status).toBe(201);
    const res = await batch({
      operations: [{ id: "c", method: "POST", path: "/Categories", headers: { "Idempotency-Key": key }, body: { name } }],
    });
    const [c] = res.body.results;
    expect(c).toMatchObject({ status: 201, body: { id: single.body.id } });
    expect(c.headers["idempotent-replayed"]).toBe("true");
  });

  it("keeps an operation's answer that holds secrets sealed, and the batch's answer too", async () => {
    const secret = `hunter2-${crypto.randomUUID()}`;
    const key = `batch-${crypto.randomUUID()}`;
    const body = {
      operations: [
        { id: "config", method: "POST", path: "/JobConfigurations", body: configBody({ runOptions: { SECRET_TOKEN: secret } }) },
      ],
    };
    const first = await batch(body, { user: owner, headers: { "idempotency-key": key } });
    expect(first.status, first.text).toBe(200);
    expect(first.body.results[0]).toMatchObject({ status: 201, body: { runOptions: { SECRET_TOKEN: secret } } });
    const stub = env.IDEMPOTENCY.get(env.IDEMPOTENCY.idFromName(owner.id!)) as unknown as DurableObjectStub<IdempotencyStore>;
    const entries = await runInDurableObject(stub, async (_instance, state) =>
      state.storage.list<{ state: string; response?: StoredResponse }>(),
    );
    const ours = [...entries].filter(([k]) => k.startsWith(key));
    expect(ours.map(([k]) => k).sort()).toEqual([key, `${key} config`]);
    for (const [, entry] of ours) {
      expect(entry.response?.sealed).toBe(true);
      expect(JSON.stringify(entry)).not.toContain(secret);
    }
    const again = await batch(body, { user: owner, headers: { "idempotency-key": key } });
    expect(again.text).toBe(first.text);
  });
});
