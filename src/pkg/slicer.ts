/**
 * Work on the thread in slices (docs/decisions.md, "Nothing holds the thread"). An isolate serves every
 * request on one thread, so work that runs for seconds in one go holds every other request for as
 * long: an image decode (four 82 KB GIFs declaring 120 MP each held /health for 15 s), or a body read
 * whose chunks are already buffered (each `await reader.read()` then resumes as a microtask, and the
 * loop never returns to the runtime until the buffer is drained: a 90 MiB upload held /health for
 * seconds). Such loops count their work on a {@link Slicer} and, once a slice's worth is done, await
 * {@link Slicer.pause}: a macrotask, so the runtime serves the other requests' events (their I/O,
 * their timers) before the work goes on.
 *
 * The budget is counted in work, not time: workerd's clock does not move while JavaScript runs (it
 * advances with I/O), so "every 5 ms" cannot be measured from inside. For decoders a unit is a pixel
 * (256 Ki of them is about 5 ms of the GIF decoder's work here); for bodies, a byte (see
 * {@link bodySlicer}).
 */

/** Work units (pixels, or bytes of decoded output) between two pauses. */
export const SLICE_UNITS = 256 * 1024;

/** Hands the thread back to the runtime until its pending events (other requests) have run. */
export const macrotask = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * Observers of every pause of every slicer in this isolate: the tests of slicing send a request from
 * here and check it is answered while the work is still under way.
 */
export const pauseObservers = new Set<(pauses: number, kind: SliceKind) => void>();

/** What a slicer slices: a decode's pixels, or a body's bytes. */
export type SliceKind = "decode" | "body";

export class Slicer {
  private left: number;
  /** How many times this work gave the thread back. */
  pauses = 0;

  constructor(
    private readonly units: number = SLICE_UNITS,
    private readonly kind: SliceKind = "decode",
    private readonly yieldToRuntime: () => Promise<void> = macrotask,
  ) {
    this.left = units;
  }

  /** Counts `n` units of work done; true when the slice is spent (the caller then awaits {@link pause}). */
  spend(n: number): boolean {
    this.left -= n;
    return this.left <= 0;
  }

  /** Gives the thread back to the runtime, then starts a new slice. */
  async pause(): Promise<void> {
    this.left = this.units;
    this.pauses++;
    for (const observe of pauseObservers) observe(this.pauses, this.kind);
    await this.yieldToRuntime();
  }

  /** Counts `n` units, and pauses when the slice is spent. */
  async step(n: number): Promise<void> {
    if (this.spend(n)) await this.pause();
  }
}

/**
 * A slicer for a body read chunk by chunk: it counts bytes, and each chunk also as BODY_CHUNK_COST
 * bytes (the promises and calls every chunk takes cost more than its bytes when chunks are small).
 * A slice is 64 KiB: with 256 KiB, a 90 MiB upload still let a probe wait 1.4 s on the local server
 * (a loaded machine); with 64 KiB, 0.75 s at most, and the upload took no longer.
 */
export const BODY_SLICE_BYTES = 64 * 1024;
export const BODY_CHUNK_COST = 4 * 1024;

export function bodySlicer(): Slicer {
  return new Slicer(BODY_SLICE_BYTES, "body");
}

/** Counts one chunk of `bytes` on a body slicer and pauses when its slice is spent. */
export function chunkRead(slicer: Slicer, bytes: number): Promise<void> | undefined {
  return slicer.spend(bytes + BODY_CHUNK_COST) ? slicer.pause() : undefined;
}

/**
 * Decoding work written as a generator: it yields the units it has done every so often, and returns
 * its result. {@link runSliced} pauses between the yields as the slicer says; {@link runWhole} runs
 * it in one go (tests, and callers that hold no request).
 */
export type Work<T> = Generator<number, T, void>;

export function runWhole<T>(work: Work<T>): T {
  for (;;) {
    const step = work.next();
    if (step.done) return step.value;
  }
}

export async function runSliced<T>(work: Work<T>, slicer: Slicer): Promise<T> {
  for (;;) {
    const step = work.next();
    if (step.done) return step.value;
    if (slicer.spend(step.value)) await slicer.pause();
  }
}
