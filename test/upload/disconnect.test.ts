/**
 * Uploads on the thread (issue 32): a large body is hashed as it streams and gives the thread back
 * while it does, and a client that disconnects mid-upload is logged as a client disconnect, not as a
 * 500, with nothing left stored.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { pauseObservers, type SliceKind } from "../../src/pkg/slicer";
import { bucketKeys, createDataType, fileForm, patternBytes, postForm, sha256Hex } from "../support/factories/upload";
import { call, tokenFor } from "../support/http";

const MiB = 1024 * 1024;

type Line = Record<string, unknown>;

/** A form serialised once, so it can be sent in pieces, and its Content-Type. */
async function serialised(form: FormData): Promise<{ bytes: Uint8Array; contentType: string }> {
  const response = new Response(form);
  return { bytes: new Uint8Array(await response.arrayBuffer()), contentType: response.headers.get("content-type")! };
}

/** A body that sends `bytes` up to `breakAt` in 64 KiB chunks, then fails as a dropped connection does. */
function breakingBody(bytes: Uint8Array, breakAt: number) {
  const state = { sent: 0 };
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (state.sent >= breakAt) return controller.error(new Error("Network connection lost."));
        const chunk = bytes.slice(state.sent, Math.min(breakAt, state.sent + 64 * 1024));
        state.sent += chunk.length;
        controller.enqueue(chunk);
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, state };
}

/** Sends one request through a fresh app (its log lines captured), as a client whose body is `body`. */
async function sendLogged(path: string, init: { method: string; headers: Record<string, string>; body: ReadableStream<Uint8Array> }) {
  const lines: Line[] = [];
  for (const method of ["log", "info", "warn", "error", "debug"] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      try {
        lines.push(JSON.parse(args.map(String).join(" ")) as Line);
      } catch {
        // Not one of our JSON lines.
      }
    });
  }
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${await tokenFor()}`);
  const ctx = createExecutionContext();
  const res = await createApp().fetch(
    new Request(`https://api.test${path}`, { method: init.method, headers, body: init.body, duplex: "half" } as RequestInit),
    { ...env, LOG_LEVEL: "info" },
    ctx,
  );
  const text = await res.text();
  await waitOnExecutionContext(ctx);
  vi.restoreAllMocks();
  return { status: res.status, text, lines };
}

afterEach(() => vi.restoreAllMocks());

describe("a client that disconnects mid-upload", () => {
  it.each([
    ["POST /Files", {}],
    ["POST /Files with an Idempotency-Key (hashed as it streams)", { "idempotency-key": "gone-half-way" }],
  ])("%s: logged as a client disconnect (warn), never a 500, and nothing is stored", async (_case, extra) => {
    const dataType = await createDataType({ allowedExtensions: ["bin"] });
    const before = await bucketKeys();
    const form = await serialised(
      fileForm([
        ["DataTypeId", dataType.id],
        ["File", { name: "survey.bin", content: patternBytes(12 * MiB, 3) }],
      ]),
    );
    const body = breakingBody(form.bytes, 11 * MiB);
    const answer = await sendLogged("/Files", {
      method: "POST",
      headers: { "content-type": form.contentType, ...extra },
      body: body.stream,
    });
    expect(body.state.sent).toBe(11 * MiB);
    expect(answer.status, answer.text).toBe(400);
    expect(answer.lines).toContainEqual(expect.objectContaining({ level: "warn", msg: "client disconnected mid-request", path: "/Files" }));
    expect(answer.lines.filter((line) => line.level === "error")).toEqual([]);
    // No row, and no object (the first 10 MiB part had gone to R2, and was removed).
    expect((await call(`/Files?dataTypeIds=${dataType.id}`)).body).toEqual([]);
    expect(await bucketKeys()).toEqual(before);
  });

  it("a resumable part that breaks off is a client disconnect too, and the part is not recorded", async () => {
    const dataType = await createDataType({ allowedExtensions: ["bin"] });
    const started = await call("/Files/Uploads", { method: "POST", body: { dataTypeId: dataType.id, name: "big.bin", size: 12 * MiB } });
    expect(started.status, started.text).toBe(201);
    const bytes = patternBytes(10 * MiB, 4);
    const body = breakingBody(bytes, 6 * MiB);
    const answer = await sendLogged(`/Files/Uploads/${started.body.uploadId}/Parts/1`, {
      method: "PUT",
      headers: { "content-type": "application/octet-stream", "content-length": String(bytes.length) },
      body: body.stream,
    });
    expect(answer.status, answer.text).toBe(400);
    expect(answer.lines).toContainEqual(expect.objectContaining({ level: "warn", msg: "client disconnected mid-request" }));
    expect(answer.lines.filter((line) => line.level === "error")).toEqual([]);
    expect((await call(`/Files/Uploads/${started.body.uploadId}`)).body.parts).toEqual([]);
  });
});

describe("a large upload is hashed as it streams, and gives the thread back meanwhile", () => {
  it("a request sent while a 24 MiB form streams in is answered before the upload, whose checksum is the file's", async () => {
    const dataType = await createDataType({ allowedExtensions: ["bin"] });
    const bytes = patternBytes(24 * MiB, 9);
    const events: string[] = [];
    let pauses = 0;
    let pausesWhenAnswered = -1;
    let probe: Promise<void> | undefined;
    const observe = (_: number, kind: SliceKind) => {
      if (kind !== "body") return;
      pauses++;
      if (!probe)
        probe = call("/Categories").then((answer) => {
          expect(answer.status).toBe(200);
          pausesWhenAnswered = pauses;
          events.push("other request answered");
        });
    };
    pauseObservers.add(observe);
    let created;
    try {
      // The whole body is there from the start: without slices, its chunks would be read one
      // microtask after another and nothing else would run until the last.
      created = await postForm(
        fileForm([
          ["DataTypeId", dataType.id],
          ["File", { name: "survey.bin", content: bytes }],
        ]),
        undefined,
        { "idempotency-key": `sliced-${crypto.randomUUID()}` },
      );
      events.push("upload answered");
    } finally {
      pauseObservers.delete(observe);
    }
    await probe;
    expect(created.status, created.text).toBe(201);
    expect(created.body.checksum).toBe(await sha256Hex(bytes));
    expect(events).toEqual(["other request answered", "upload answered"]);
    expect(pauses).toBeGreaterThan(pausesWhenAnswered + 10);
  });

  it("the body is hashed and stored as it arrives: the Worker reads 20 of 21 MiB before the client sends the rest", async () => {
    const dataType = await createDataType({ allowedExtensions: ["bin"] });
    const bytes = patternBytes(21 * MiB, 11);
    const form = await serialised(
      fileForm([
        ["DataTypeId", dataType.id],
        ["File", { name: "survey.bin", content: bytes }],
      ]),
    );
    // The body's last MiB is held back until the Worker has read everything before it: a Worker that
    // waited for the whole body (to hash it first) would never get there, and the test would time out.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let reachedGate!: () => void;
    const atGate = new Promise<void>((resolve) => (reachedGate = resolve));
    let sent = 0;
    const holdAt = form.bytes.length - MiB;
    const stream = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          if (sent >= form.bytes.length) return controller.close();
          if (sent >= holdAt) {
            reachedGate();
            await gate;
          }
          const chunk = form.bytes.slice(sent, Math.min(sent + 64 * 1024, sent < holdAt ? holdAt : form.bytes.length));
          sent += chunk.length;
          controller.enqueue(chunk);
        },
      },
      { highWaterMark: 0 },
    );
    const answer = call("/Files", {
      method: "POST",
      rawBody: stream,
      headers: { "content-type": form.contentType, "idempotency-key": `held-${crypto.randomUUID()}` },
    });
    await atGate;
    expect(sent).toBe(holdAt);
    release();
    const created = await answer;
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ size: bytes.length, checksum: await sha256Hex(bytes) });
  });
});
