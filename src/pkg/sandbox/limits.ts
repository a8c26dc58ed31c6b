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

/**
 * The longest one stretch of user code (one expression, one job of a library run: the code between
 * two awaits or yields) may hold the isolate's thread before it is stopped. A Worker's isolate serves
 * many requests on one thread, and locally every request of the process shares it, so a stretch
 * longer than this delays everyone else's requests by that much. Enforced as {@link STRETCH_POLLS}
 * interrupt polls everywhere and, where the clock moves, by {@link STRETCH_WALL_BACKSTOP_MS} too.
 */
export const MAX_STRETCH_MS = 50;
/** {@link MAX_STRETCH_MS} as interrupt polls, at {@link INTERRUPT_POLLS_PER_MS}. */
export const STRETCH_POLLS = Math.ceil(MAX_STRETCH_MS * INTERRUPT_POLLS_PER_MS);
/**
 * The wall-time bound of a stretch where the clock moves: {@link WALL_CLOCK_BACKSTOP_FACTOR} times
 * {@link MAX_STRETCH_MS}, as for expressions. It only catches work whose poll points are far apart
 * (one long native call, bounded in turn by the engine's 24 MB memory); loops and calls meet the poll
 * budget first (an empty loop in about 2 ms, a logging loop in about 15). Wall time also holds garbage
 * collection and the machine's other processes: at 100 ms, a loaded machine (load average 8 on 2
 * cores) failed an honest library whose stretches take about 5 ms.
 */
export const STRETCH_WALL_BACKSTOP_MS = WALL_CLOCK_BACKSTOP_FACTOR * MAX_STRETCH_MS;
/**
 * A sliced run (a library) gives the thread back after this much work even when its stretches are
 * short: consecutive jobs are run together up to this many milliseconds (or half as many polls, or
 * {@link SLICE_MAX_JOBS} jobs), then the runner yields to the event loop.
 */
export const SLICE_MS = 20;
export const SLICE_MAX_JOBS = 512;

export function startInterruptMeter(timeMs: number): InterruptMeter {
  const deadline = performance.now() + timeMs * WALL_CLOCK_BACKSTOP_FACTOR;
  const budget = Math.max(1, Math.ceil(timeMs * INTERRUPT_POLLS_PER_MS));
  let polls = 0;
  let interrupted = false;
  return {
    handler: () => {
      polls += 1;
      // Once tripped, stay tripped: QuickJS may poll again while unwinding.
      if (interrupted || polls > budget || performance.now() > deadline) interrupted = true;
      return interrupted;
    },
    get interrupted() {
      return interrupted;
    },
  };
}

/** Why a sliced run was stopped by its meter. */
export type RunStop = "time" | "stretch";

/**
 * The meter of a run that is sliced (a custom index library): a total budget of polls (its time
 * limit), a budget per stretch ({@link STRETCH_POLLS}, and {@link STRETCH_WALL_BACKSTOP_MS} of wall time where
 * the clock moves), and the slice bookkeeping that tells the runner when to yield.
 */
export interface RunMeter {
  /** Installed as the QuickJS runtime's interrupt handler (with the caller's own stop conditions). */
  readonly handler: () => boolean;
  /** Why the meter stopped the run, once it did. */
  readonly stopped: RunStop | undefined;
  /** Called before each job (a stretch): its poll and wall budgets start afresh. */
  beginStretch(): void;
  /** Called before the first job of a slice. */
  beginSlice(): void;
  /** True once the current slice has used its share (time, polls or jobs): the runner should yield. */
  sliceSpent(jobs: number): boolean;
  /** Counts one job run; jobs cost the host time the polls do not see. */
  countJob(): void;
}

/**
 * Jobs that count as one interrupt poll of the time budget. Each job costs the host a few
 * microseconds that QuickJS does not poll (entering and leaving the engine), so a library of tiny
 * jobs (`for (;;) await null`) would otherwise run for millions of jobs on a budget meant for
 * thousands of polls. Measured here (workerd, `for (;;) await null`): about 100 jobs per millisecond,
 * so 200 jobs stand for the 2 ms a poll stands for ({@link INTERRUPT_POLLS_PER_MS}).
 */
export const JOBS_PER_POLL = 200;
/** A sliced run's busy time (inside its slices) may reach this many times its time limit where the clock moves. */
export const RUN_BUSY_BACKSTOP_FACTOR = 2;

/**
 * @param limitStretches false only for a warm-up run, whose first calls into the engine include V8's
 *   lazy compilation of the WebAssembly functions they reach (once per isolate), not the code's own work.
 */
export function startRunMeter(timeMs: number, limitStretches = true, now: () => number = Date.now): RunMeter {
  const budget = Math.max(1, Math.ceil(timeMs * INTERRUPT_POLLS_PER_MS));
  // Busy time (inside slices) where the clock moves; time spent yielded to others does not count.
  const busyLimit = timeMs * RUN_BUSY_BACKSTOP_FACTOR;
  const slicePolls = Math.max(1, Math.ceil(SLICE_MS * INTERRUPT_POLLS_PER_MS));
  let polls = 0;
  let jobs = 0;
  let busy = 0;
  let stretchPolls = 0;
  let stretchStart = now();
  let sliceStart = stretchStart;
  let slicePollsUsed = 0;
  let stopped: RunStop | undefined;
  const stop = (why: RunStop) => {
    stopped ??= why;
    return true;
  };
  return {
    handler: () => {
      // Once stopped, stay stopped: QuickJS may poll again while unwinding.
      if (stopped) return true;
      polls += 1;
      stretchPolls += 1;
      slicePollsUsed += 1;
      const at = now();
      if (polls > budget || busy + (at - sliceStart) > busyLimit) return stop("time");
      if (limitStretches && (stretchPolls > STRETCH_POLLS || at - stretchStart > STRETCH_WALL_BACKSTOP_MS)) return stop("stretch");
      return false;
    },
    get stopped() {
      return stopped;
    },
    beginStretch() {
      stretchPolls = 0;
      stretchStart = now();
    },
    beginSlice() {
      sliceStart = now();
      slicePollsUsed = 0;
    },
    countJob() {
      jobs += 1;
      if (jobs % JOBS_PER_POLL === 0) {
        polls += 1;
        if (polls > budget) stop("time");
      }
    },
    sliceSpent(jobs) {
      const elapsed = now() - sliceStart;
      if (jobs >= SLICE_MAX_JOBS || slicePollsUsed >= slicePolls || elapsed >= SLICE_MS) {
        busy += elapsed;
        return true;
      }
      return false;
    },
  };
}
