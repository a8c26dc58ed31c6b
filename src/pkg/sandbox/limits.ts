/**
 * Resource limits of one expression evaluation, and the interrupt meter that enforces the time limit.
 */

/** Default time limit per evaluation (see {@link ExpressionLimits.timeMs} for what "time" means). */
export const DEFAULT_TIME_MS = 50;
/** Default cap on the QuickJS heap of one evaluation. */
export const DEFAULT_MEMORY_BYTES = 8 * 1024 * 1024;
/**
 * Default QuickJS stack limit. Deliberately far below the 256 KB first proposed: QuickJS measures
 * only its emscripten shadow stack, while deep native recursion (JSON.stringify of nested arrays,
 * the parser on nested brackets) mostly uses the host's V8 stack. Measured with this build in
 * workerd and Node 20: at 256 KB such recursion overflowed the V8 stack before QuickJS noticed (at
 * 1 MB even plain JS recursion did); at 32 KB QuickJS caught every case tried, and ordinary
 * recursion still gets ~160 frames. Host overflows that still happen are survived by discarding
 * the engine (see expression.ts), at the price of instantiating a new one.
 */
export const DEFAULT_STACK_BYTES = 32 * 1024;

/**
 * QuickJS calls the interrupt handler once per 10 000 "poll points" (loop back-edges and calls).
 * On deployed Workers the clock does not advance while JavaScript runs (it moves only at I/O, a
 * Spectre mitigation), so a wall-clock deadline can never fire there; the time limit is therefore a
 * budget of polls, which also makes it deterministic: an expression times out on every machine or on
 * none. Measured here (Node 20, warm): 0.02 to 12 polls per ms depending on the work between poll
 * points (12 for an empty loop, 1-4 for arithmetic, ~0.2 for object allocation, ~0.02 for a
 * JSON.parse/stringify loop). 0.5 per ms stops cheap runaway loops well inside the time limit and
 * still allows legitimate expressions a few hundred thousand loop iterations or calls.
 */
export const INTERRUPT_POLLS_PER_MS = 0.5;

/**
 * Where the clock does move (Node, `wrangler dev`, tests), a wall-clock deadline of this many times
 * `timeMs` also applies. It only bounds loops whose poll points are far apart; it is generous so that
 * a loaded CI machine does not turn a legitimate expression into a timeout that production would
 * never report.
 */
export const WALL_CLOCK_BACKSTOP_FACTOR = 10;

/** Limits for one evaluation; omitted fields take the defaults above. */
export interface ExpressionLimits {
  /**
   * Time limit in milliseconds, enforced as a budget of `timeMs * INTERRUPT_POLLS_PER_MS` interrupt
   * polls (see there). An expression whose poll points are far apart (heavy native calls inside a
   * loop) can run longer than `timeMs`: up to `WALL_CLOCK_BACKSTOP_FACTOR * timeMs` where the clock
   * moves, and in production until the budget runs out or the Worker's CPU limit ends the request.
   */
  timeMs?: number;
  /**
   * QuickJS heap limit, including the scope values copied in. In this emscripten build QuickJS
   * reliably enforces it only per single allocation (quickjs-emscripten #271); the WebAssembly memory cap
   * (ENGINE_MEMORY_MAX_BYTES in engine.ts) bounds everything else, so values above ~20 MB have no
   * effect.
   */
  memoryBytes?: number;
  /** QuickJS stack limit; see {@link DEFAULT_STACK_BYTES} before raising it. */
  stackBytes?: number;
}

export type ResolvedLimits = Required<ExpressionLimits>;

/** Applies the defaults; a limit that is not a positive finite number is a caller bug. */
export function resolveLimits(limits: ExpressionLimits): ResolvedLimits {
  const resolved = {
    timeMs: limits.timeMs ?? DEFAULT_TIME_MS,
    memoryBytes: limits.memoryBytes ?? DEFAULT_MEMORY_BYTES,
    stackBytes: limits.stackBytes ?? DEFAULT_STACK_BYTES,
  };
  for (const [name, value] of Object.entries(resolved)) {
    if (!Number.isFinite(value) || value <= 0) {
      throw new RangeError(`expression limit ${name} must be a positive number, got ${String(value)}`);
    }
  }
  return resolved;
}

/** Decides when to interrupt one evaluation, and remembers that it did. */
export interface InterruptMeter {
  /** Installed as the QuickJS runtime's interrupt handler. */
  readonly handler: () => boolean;
  /** True once the handler has asked QuickJS to stop. */
  readonly interrupted: boolean;
}

export function startInterruptMeter(timeMs: number): InterruptMeter {
  const deadline = Date.now() + timeMs * WALL_CLOCK_BACKSTOP_FACTOR;
  const budget = Math.max(1, Math.ceil(timeMs * INTERRUPT_POLLS_PER_MS));
  let polls = 0;
  let interrupted = false;
  return {
    handler: () => {
      polls += 1;
      // Once tripped, stay tripped: QuickJS may poll again while unwinding.
      if (interrupted || polls > budget || Date.now() > deadline) interrupted = true;
      return interrupted;
    },
    get interrupted() {
      return interrupted;
    },
  };
}
