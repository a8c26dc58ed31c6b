/**
 * Admission (issue 32; src/pkg/admission.ts): an isolate takes on a bounded number of requests per
 * user, in all, and of large bodies; over a bound it answers 429 (per user) or 503 (the isolate) with
 * Retry-After at once, before the request reads its body or writes anything. The held requests are
 * requests whose bodies the test has not finished sending, so they stay in progress without sleeps.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { admissionCounts } from "../../src/pkg/admission";
import type { Clock } from "../../src/platform/services";
import { call, tokenFor, type TestUser } from "../support/http";

const ALICE = { id: "overload-alice", name: "Alice" };
const BOB = { id: "overload-bob", name: "Bob" };

type Settings = Partial<
  Record<
    "MAX_USER_REQUESTS_IN_FLIGHT" | "MAX_USER_REQUESTS_PER_SECOND" | "MAX_REQUESTS_IN_FLIGHT" | "MAX_LARGE_BODIES_IN_FLIGHT" | "LOG_LEVEL",
    string
  >
>;

/** One request through an app whose admission settings are `settings`; the answer's body read. */
async function send(settings: Settings, path: string, init: RequestInit & { user: Partial<TestUser> }, clock?: Clock) {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${await tokenFor(init.user)}`);
  const ctx = createExecutionContext();
  const res = await createApp(clock ? { clock } : {}).fetch(
    new Request(`https://api.test${path}`, { ...init, headers }),
    { ...env, ...settings },
    ctx,
  );
  const text = await res.text();
  await waitOnExecutionContext(ctx);
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/**
 * A POST /Categories whose JSON body is held back until `release()`: the request is in progress
 * (admitted, waiting for its body) until then. `started` resolves once the Worker asks for the body.
 */
function heldWrite(settings: Settings, user: Partial<TestUser>, name: string, clock?: Clock) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const asked = new Promise<void>((resolve) => (started = resolve));
  const body = new TextEncoder().encode(JSON.stringify({ name }));
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        started();
        await gate;
        controller.enqueue(body);
        controller.close();
      },
    },
    { highWaterMark: 0 },
  );
  const answer = send(
    settings,
    "/Categories",
    {
      method: "POST",
      user,
      headers: { "content-type": "application/json" },
      body: stream,
      duplex: "half",
    } as RequestInit & { user: Partial<TestUser> },
    clock,
  );
  return { answer, asked, release };
}

/** An upload whose body is held back after its first bytes: a large body in progress. */
function heldUpload(settings: Settings, user: Partial<TestUser>) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const asked = new Promise<void>((resolve) => (started = resolve));
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        started();
        await gate;
        controller.close();
      },
    },
    { highWaterMark: 0 },
  );
  const answer = send(settings, "/Files", {
    method: "POST",
    user,
    headers: { "content-type": "multipart/form-data; boundary=held" },
    body: stream,
    duplex: "half",
  } as RequestInit & { user: Partial<TestUser> });
  return { answer, asked, release };
}

describe("admission", () => {
  it("a user over their requests in progress gets 429 with Retry-After at once, and it wrote nothing; others go on", async () => {
    const settings = { MAX_USER_REQUESTS_IN_FLIGHT: "2" };
    const held = [heldWrite(settings, ALICE, "overload held 1"), heldWrite(settings, ALICE, "overload held 2")];
    await Promise.all(held.map((h) => h.asked));
    expect(admissionCounts().inFlight).toBe(2);

    const refused = await send(settings, "/Categories", {
      method: "POST",
      user: ALICE,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "overload refused" }),
    });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(refused.headers.get("content-type")).toBe("application/problem+json");
    expect(refused.body).toMatchObject({ code: "TooManyRequests", status: 429 });
    expect(refused.body.detail).toMatch(/already has 2 requests in progress/);
    // Reads count too: the same user's read waits its turn the same way.
    expect((await send(settings, "/Categories", { user: ALICE })).status).toBe(429);
    // Another user is served meanwhile.
    expect((await send(settings, "/Categories", { user: BOB })).status).toBe(200);

    for (const h of held) h.release();
    expect((await Promise.all(held.map((h) => h.answer))).map((a) => a.status)).toEqual([201, 201]);
    expect(admissionCounts().inFlight).toBe(0);
    const names = ((await call("/Categories?take=1000")).body as { name: string }[]).map((c) => c.name);
    expect(names).toEqual(expect.arrayContaining(["overload held 1", "overload held 2"]));
    expect(names).not.toContain("overload refused");
    // Once they are done, the user is served again.
    expect((await send(settings, "/Categories", { user: ALICE })).status).toBe(200);
  });

  it("a user's refusals in one second spread their Retry-After: one more second for each limit's worth refused", async () => {
    const settings = { MAX_USER_REQUESTS_IN_FLIGHT: "2" };
    const user = { id: "overload-dave", name: "Dave" };
    const held = [heldWrite(settings, user, "spread 1"), heldWrite(settings, user, "spread 2")];
    await Promise.all(held.map((h) => h.asked));
    let now = Date.parse("2026-11-28T10:00:00.100Z");
    const clock: Clock = { now: () => new Date(now) };
    const waits: string[] = [];
    for (let i = 0; i < 5; i++) waits.push((await send(settings, "/Categories", { user }, clock)).headers.get("retry-after")!);
    expect(waits).toEqual(["1", "1", "2", "2", "3"]);
    // The next second starts over.
    now += 1000;
    expect((await send(settings, "/Categories", { user }, clock)).headers.get("retry-after")).toBe("1");
    for (const h of held) h.release();
    await Promise.all(held.map((h) => h.answer));
  });

  it("a user starting requests faster than the isolate takes from one gets 429 at once; their bucket refills", async () => {
    // 10 a second: a bucket of 2 (a fifth of a second's worth), refilled at one every 100 ms.
    const settings = { MAX_USER_REQUESTS_PER_SECOND: "10" };
    const user = { id: "overload-erin", name: "Erin" };
    let now = Date.parse("2026-11-28T11:00:00.000Z");
    const clock: Clock = { now: () => new Date(now) };
    const read = async (who: Partial<TestUser> = user) => (await send(settings, "/Categories", { user: who }, clock)).status;
    // One request at a time is never refused for its rate: it cannot queue in front of anyone.
    expect([await read(), await read(), await read(), await read(), await read()]).toEqual([200, 200, 200, 200, 200]);
    // With one of the user's requests in progress, the bucket counts: 2 at once, the held one among them.
    now += 1000;
    const held = heldWrite(settings, user, "bucket held", clock);
    await held.asked;
    expect(await read()).toBe(200);
    const refused = await send(
      settings,
      "/Categories",
      { method: "POST", user, headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "bucket refused" }) },
      clock,
    );
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(refused.body).toMatchObject({ code: "TooManyRequests", status: 429 });
    expect(refused.body.detail).toMatch(/10 a second, at most 2 at once/);
    // Another user has a bucket of their own.
    expect(await read(BOB)).toBe(200);
    // A tenth of a second later, one more request is the user's; a whole second, two again, never more.
    now += 100;
    expect([await read(), await read()]).toEqual([200, 429]);
    now += 1000;
    expect([await read(), await read(), await read()]).toEqual([200, 200, 429]);
    // Spread out, ten a second all go through.
    const spread: number[] = [];
    for (let i = 0; i < 10; i++) {
      now += 100;
      spread.push(await read());
    }
    expect(spread).toEqual(Array(10).fill(200));
    // A clock that steps back an hour gives nothing back and takes nothing away.
    now -= 3_600_000;
    expect(await read()).toBe(429);
    now += 1000;
    expect([await read(), await read(), await read()]).toEqual([200, 200, 429]);
    held.release();
    expect((await held.answer).status).toBe(201);
    const names = ((await call("/Categories?take=1000")).body as { name: string }[]).map((c) => c.name);
    expect(names).toContain("bucket held");
    expect(names).not.toContain("bucket refused");
  });

  it("an isolate serving all it takes answers 503 Overloaded with Retry-After, to every user", async () => {
    const settings = { MAX_REQUESTS_IN_FLIGHT: "2" };
    const held = [heldWrite(settings, ALICE, "busy 1"), heldWrite(settings, BOB, "busy 2")];
    await Promise.all(held.map((h) => h.asked));
    const refused = await send(settings, "/Categories", { user: { id: "overload-carol", name: "Carol" } });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(refused.body).toMatchObject({ code: "Overloaded", status: 503 });
    for (const h of held) h.release();
    await Promise.all(held.map((h) => h.answer));
    expect((await send(settings, "/Categories", { user: { id: "overload-carol", name: "Carol" } })).status).toBe(200);
  });

  it("large bodies have slots of their own: over them an upload gets 503, a JSON write still goes through", async () => {
    const settings = { MAX_LARGE_BODIES_IN_FLIGHT: "1" };
    const held = heldUpload(settings, ALICE);
    await held.asked;
    expect(admissionCounts().largeBodies).toBe(1);
    const refused = await send(settings, "/Files", {
      method: "POST",
      user: BOB,
      headers: { "content-type": "multipart/form-data; boundary=x", "content-length": String(8 * 1024 * 1024) },
      body: new Uint8Array(8 * 1024 * 1024),
    });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(refused.body.detail).toMatch(/receiving 1 large bodies/);
    const json = await send(settings, "/Categories", {
      method: "POST",
      user: BOB,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "small write beside an upload" }),
    });
    expect(json.status).toBe(201);
    held.release();
    // The held upload's body ends without a form: a 400, and its slot is free again.
    expect((await held.answer).status).toBe(400);
    expect(admissionCounts().largeBodies).toBe(0);
  });

  it("logs a user's 429s at info once a second, saying how many went to debug since", async () => {
    const settings = { MAX_USER_REQUESTS_IN_FLIGHT: "1", LOG_LEVEL: "info" };
    const carol = { id: "overload-carol-log", name: "Carol" };
    let now = Date.parse("2026-11-29T10:00:00.100Z");
    const clock: Clock = { now: () => new Date(now) };
    const held = heldWrite(settings, carol, "overload held for the log", clock);
    await held.asked;
    const lines: Record<string, unknown>[] = [];
    for (const method of ["log", "info", "debug"] as const)
      vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void lines.push(JSON.parse(args.map(String).join(" "))));
    try {
      for (let i = 0; i < 5; i++) expect((await send(settings, "/Categories", { user: carol }, clock)).status).toBe(429);
      now += 1000;
      expect((await send(settings, "/Categories", { user: carol }, clock)).status).toBe(429);
    } finally {
      vi.restoreAllMocks();
    }
    const refusals = lines.filter((line) => line.msg === "request" && line.status === 429);
    expect(refusals).toEqual([
      expect.objectContaining({ level: "info", userId: carol.id }),
      expect.objectContaining({ level: "info", userId: carol.id, refusalsNotLogged: 4 }),
    ]);
    expect(refusals[0]).not.toHaveProperty("refusalsNotLogged");
    held.release();
    expect((await held.answer).status).toBe(201);
  });

  it("documents 429 and 503 on every authenticated route", async () => {
    const document = (await call("/openapi.json", { anonymous: true })).body as {
      paths: Record<string, Record<string, { responses: Record<string, unknown>; security?: unknown[] }>>;
    };
    const operations = Object.values(document.paths).flatMap((methods) => Object.values(methods));
    const secured = operations.filter((op) => (op.security ?? []).length > 0);
    expect(secured.length).toBeGreaterThan(50);
    for (const op of secured) expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["429", "503"]));
  });
});
