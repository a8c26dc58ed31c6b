/**
 * The Idempotency-Key fingerprint of a request: the SHA-256 of `${method} ${path}\n` followed by the
 * body, or, for a multipart form, by what the form means (each part's field name, file name, content
 * type and the SHA-256 of its content, in order), so a phone that retries an upload with a new random
 * boundary sends the same fingerprint. A form that cannot be read is fingerprinted by its raw bytes.
 *
 * Two ways to the same value: {@link wholeFingerprint} for a body already in memory (JSON, at most the
 * JSON limit), and {@link BodyTap}, which hashes a body while it streams to the handler, a chunk at a
 * time, so an upload of 95 MiB never sits in memory for its fingerprint.
 */
import { bodyFailure } from "./errors";
import { readForm } from "./multipart";
import { bodySlicer, chunkRead } from "./slicer";

const encoder = new TextEncoder();

export const hex = (bytes: ArrayBuffer) => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");

/** The SHA-256 of a request's method and path: what a key is checked against before its body is read. */
export async function headFingerprint(method: string, path: string): Promise<string> {
  return hex(await crypto.subtle.digest("SHA-256", encoder.encode(`${method} ${path}`)));
}

async function digestOf(parts: (Uint8Array | ArrayBuffer)[]): Promise<string> {
  const digest = new crypto.DigestStream("SHA-256");
  const writer = digest.getWriter();
  for (const part of parts) await writer.write(part instanceof Uint8Array ? part : new Uint8Array(part));
  await writer.close();
  return hex(await digest.digest);
}

/**
 * What a multipart form means, one JSON line per part: [name, filename, contentType, sha256 hex].
 * Null when the body is not a readable form. Reads `body` to its end (or cancels it, as readForm does).
 */
async function formMeaning(body: ReadableStream<Uint8Array>, boundary: string): Promise<Uint8Array | null> {
  try {
    const lines: string[] = [];
    for await (const part of readForm(body, boundary)) {
      const digest = new crypto.DigestStream("SHA-256");
      const writer = digest.getWriter();
      for await (const chunk of part.chunks) await writer.write(chunk);
      await writer.close();
      lines.push(JSON.stringify([part.head.name, part.head.filename, part.head.contentType, hex(await digest.digest)]));
    }
    return encoder.encode(lines.join("\n"));
  } catch {
    return null;
  }
}

/** The fingerprint of a request whose body is in memory (or absent). */
export async function wholeFingerprint(method: string, path: string, body: ArrayBuffer, boundary: string | null): Promise<string> {
  const prefix = encoder.encode(`${method} ${path}\n`);
  const meaning = boundary ? await formMeaning(new Response(body).body ?? new Blob([]).stream(), boundary) : null;
  return digestOf([prefix, meaning ?? body]);
}

/**
 * Hashes a request body as it passes. `stream` is what the handler reads: each chunk it pulls from
 * the source is first given to the fingerprint (the raw digest and, for a form, a second reader of the
 * form that follows the bytes in lockstep), then handed on. Nothing is buffered beyond a chunk and the
 * form reader's look-ahead. A handler that stops reading (a refusal part-way, a cancelled stream)
 * leaves the rest to {@link finish}, which reads and hashes it without keeping it.
 */
/** Bytes joined into one block before they are hashed and handed on (see BodyTap.block). */
const BLOCK = 256 * 1024;

export class BodyTap {
  readonly stream: ReadableStream<Uint8Array>;
  /** Bytes that passed so far. */
  bytes = 0;
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly prefix: Uint8Array;
  private readonly prefixWritten: Promise<void>;
  private readonly raw = new crypto.DigestStream("SHA-256");
  private readonly rawWriter: WritableStreamDefaultWriter<Uint8Array>;
  private form: { writer: WritableStreamDefaultWriter<Uint8Array>; open: boolean; meaning: Promise<Uint8Array | null> } | null = null;
  private ended = false;
  private sourceDone = false;
  private turn: Promise<unknown> = Promise.resolve();
  private readonly slicer = bodySlicer();
  private result: Promise<string> | null = null;

  constructor(
    source: ReadableStream<Uint8Array>,
    method: string,
    path: string,
    boundary: string | null,
    private readonly events: { onChunk?: () => void; onFingerprint?: (fingerprint: string) => void } = {},
  ) {
    this.reader = source.getReader();
    // Rejected when the tap is abandoned (its writer aborted); finish() awaits it otherwise.
    this.raw.digest.catch(() => undefined);
    this.rawWriter = this.raw.getWriter();
    this.prefix = encoder.encode(`${method} ${path}\n`);
    this.prefixWritten = this.rawWriter.write(this.prefix);
    if (boundary) {
      // An identity TransformStream whose readable side (high-water mark 0) the form reader pulls:
      // a write resolves once the reader has taken the chunk, so the form side holds about one chunk.
      const pipe = new TransformStream<Uint8Array, Uint8Array>();
      this.form = { writer: pipe.writable.getWriter(), open: true, meaning: formMeaning(pipe.readable, boundary) };
    }
    this.stream = new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
          const chunk = await this.next();
          if (chunk === null) controller.close();
          else controller.enqueue(chunk);
        },
        // The handler stopped reading (a refused form, say): the rest is read by finish(), not cancelled.
        cancel: () => undefined,
      },
      { highWaterMark: 0 },
    );
  }

  /** One chunk from the source, hashed; null at its end. Calls are serialised. */
  private next(): Promise<Uint8Array | null> {
    const run = this.turn.then(async () => {
      if (this.ended) return null;
      const { value, done } = await this.block().catch((error: unknown) => {
        // The body failed (the client went away, or it passed the route's limit): the form reader ends too.
        this.form?.writer.abort(error).catch(() => undefined);
        throw error;
      });
      if (done) {
        this.ended = true;
        if (this.form?.open) await this.form.writer.close().catch(() => undefined);
        // The whole body has passed: its fingerprint is known as soon as the hashes settle, before the
        // handler has finished with it (not awaited here: finish() waits for this turn).
        const onFingerprint = this.events.onFingerprint;
        if (onFingerprint) this.finish().then(onFingerprint, () => undefined);
        return null;
      }
      this.bytes += value.byteLength;
      await this.prefixWritten;
      await this.rawWriter.write(value);
      if (this.form?.open) {
        // The form reader may keep a tail of the chunk for its next search: it gets its own copy,
        // so the handler (or R2 behind it) may do as it likes with the original.
        try {
          await this.form.writer.write(value.slice());
        } catch {
          // The form reader ended early (the form closed, or it is malformed): it needs no more bytes.
          this.form.open = false;
        }
      }
      this.events.onChunk?.();
      return value;
    });
    this.turn = run.catch(() => undefined);
    return run;
  }

  /**
   * The next block of the body: request bodies arrive in chunks of a few KiB, and every chunk costs
   * the hashes, the form reader and the handler a round of promises, so chunks are joined up to
   * BLOCK bytes (one copy) before they pass. `done` only when the body ended and nothing is left.
   */
  private async block(): Promise<{ value: Uint8Array; done: false } | { value: undefined; done: true }> {
    const parts: Uint8Array[] = [];
    let size = 0;
    while (size < BLOCK && !this.sourceDone) {
      const { value, done } = await this.reader.read().catch((error: unknown) => {
        throw bodyFailure(error);
      });
      if (done) this.sourceDone = true;
      else if (value.byteLength > 0) {
        parts.push(value);
        size += value.byteLength;
        // Chunks already received are read without a turn of the event loop: give the thread back
        // every slice (./slicer.ts), so a large body never holds the other requests.
        await chunkRead(this.slicer, value.byteLength);
      }
    }
    if (parts.length === 0) return { value: undefined, done: true };
    if (parts.length === 1) return { value: parts[0]!, done: false };
    const joined = new Uint8Array(size);
    let at = 0;
    for (const part of parts) {
      joined.set(part, at);
      at += part.byteLength;
    }
    return { value: joined, done: false };
  }

  /**
   * Reads what the handler left unread and returns the fingerprint (same value as
   * {@link wholeFingerprint} of the same request). Rejects when the body could not be read to its end.
   */
  finish(): Promise<string> {
    this.result ??= (async () => {
      while ((await this.next()) !== null);
      await this.rawWriter.close();
      const raw = new Uint8Array(await this.raw.digest);
      const meaning = this.form ? await this.form.meaning : null;
      if (meaning === null) return hex(raw.buffer as ArrayBuffer);
      return digestOf([this.prefix, meaning]);
    })();
    return this.result;
  }

  /** Gives up: the body is not needed any more (the key's answer is already decided). */
  abandon(): void {
    this.ended = true;
    this.rawWriter.abort().catch(() => undefined);
    this.form?.writer.abort().catch(() => undefined);
    this.reader.cancel().catch(() => undefined);
  }
}

/**
 * Reads and drops a body the answer does not depend on (at most `limit` bytes, then it is cancelled),
 * so the client's keep-alive connection stays usable (see readForm in ./multipart.ts).
 */
export async function discardBody(body: ReadableStream<Uint8Array> | null, limit: number): Promise<void> {
  if (!body) return;
  const reader = body.getReader();
  let read = 0;
  try {
    while (read <= limit) {
      const { value, done } = await reader.read();
      if (done) return;
      read += value.byteLength;
    }
    await reader.cancel();
  } catch {
    // A body that fails to arrive needs no draining.
  } finally {
    reader.releaseLock();
  }
}
