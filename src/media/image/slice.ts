/**
 * Decoding in slices (docs/decisions.md, "Decoding never holds the thread"). An isolate serves every
 * request on one thread, so a decode that runs for seconds in one go holds every other request for
 * as long (four 82 KB GIFs declaring 120 MP each held /health for 15 s). The decoders' loops count
 * their work (pixels, or bytes of output) on a {@link Slicer} and, once a slice's worth is done,
 * await {@link Slicer.pause}: a macrotask, so the runtime serves the other requests' events (their
 * I/O, their timers) before the decode goes on.
 *
 * The budget is counted in work, not time: workerd's clock does not move while JavaScript runs (it
 * advances with I/O), so "every 5 ms" cannot be measured from inside. 256 Ki units is about 5 ms of
 * the GIF decoder's work here (docs/benchmarks.md, "Hostile soak").
 */

/** Work units (pixels, or bytes of decoded output) between two pauses. */
export const SLICE_UNITS = 256 * 1024;

/** Hands the thread back to the runtime until its pending events (other requests) have run. */
export const macrotask = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * Observers of every pause of every decode in this isolate: the test of slicing sends a request from
 * here and checks it is answered while the decode is still under way.
 */
export const decodePauseObservers = new Set<(pauses: number) => void>();

export class Slicer {
  private left: number;
  /** How many times this decode gave the thread back. */
  pauses = 0;

  constructor(
    private readonly units: number = SLICE_UNITS,
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
    for (const observe of decodePauseObservers) observe(this.pauses);
    await this.yieldToRuntime();
  }

  /** Counts `n` units, and pauses when the slice is spent. */
  async step(n: number): Promise<void> {
    if (this.spend(n)) await this.pause();
  }
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
