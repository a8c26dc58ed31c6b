/**
 * The QuickJS WebAssembly module, instantiated on first use and shared by all evaluations in the
 * isolate.
 *
 * The `.wasm` file is imported as a precompiled WebAssembly.Module (wrangler's CompiledWasm rule):
 * Workers cannot compile WebAssembly from bytes at run time, so the variant is told to instantiate
 * this module instead of fetching a file. Instantiating costs a few milliseconds and 16 MB of
 * linear memory, which is why it waits for the first expression instead of running at import.
 */
import type { EmscriptenModuleLoaderOptions, QuickJSWASMModule } from "quickjs-emscripten-core";

/**
 * QuickJS's code and its .wasm, imported when the first engine is made: a module graph that never
 * evaluates an expression or runs a library (most requests, most test files) never loads them.
 * The .wasm path is relative and ends in ".wasm" for two reasons: wrangler matches module rules
 * against the specifier text, so the package's "./wasm" export (no ".wasm" suffix) misses the
 * CompiledWasm rule for `.wasm` files and the build fails, while Vite (vitest) enforces the export map
 * and refuses a deep "<package>/dist/....wasm" specifier. A relative path bypasses export maps in both.
 */
function loadQuickJs() {
  return Promise.all([
    import("quickjs-emscripten-core"),
    import("@jitl/quickjs-wasmfile-release-sync"),
    import("../../../node_modules/@jitl/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm"),
  ]);
}

/** One instantiated engine. An evaluation holds on to the lease it started with. */
export interface EngineLease {
  readonly module: QuickJSWASMModule;
  /** Which instantiation this is, so discarding a stale lease cannot drop a newer engine. */
  readonly generation: number;
}

let generation = 0;
let current: Promise<EngineLease> | undefined;

/** The shared engine, instantiated by the first caller; concurrent first callers share one promise. */
export function acquireEngine(): Promise<EngineLease> {
  if (current === undefined) {
    const loading = instantiate(generation);
    current = loading;
    // A failed instantiation must not stay cached: the next expression tries again.
    loading.catch(() => {
      if (current === loading) current = undefined;
    });
  }
  return current;
}

/**
 * Forgets `lease` so that the next evaluation instantiates a fresh engine. Called when a host-level
 * exception (V8 stack overflow, an emscripten abort) unwound through WebAssembly frames: QuickJS's
 * heap is then in an unknown state, and touching it again (even to dispose) can abort the instance,
 * after which every later call fails. The abandoned instance is reclaimed by the garbage collector.
 */
export function discardEngine(lease: EngineLease): void {
  if (lease.generation !== generation) return;
  generation += 1;
  current = undefined;
}

/**
 * Hard cap on the engine's WebAssembly memory, shared by the (sequential) evaluations of an isolate.
 * It exists because QuickJS's own memory limit does not hold in emscripten builds: QuickJS counts an
 * allocation by `malloc_usable_size`, which is 0 under emscripten, so large strings, arrays and
 * typed arrays are never added up and only single allocations above the limit are refused
 * (quickjs-emscripten issues #255 and #271; measured here: 80 MB of arrays under an 8 MB limit).
 * With a capped memory, growth fails, malloc returns NULL and QuickJS throws its ordinary
 * "out of memory" error. 16 MB is the minimum the module declares (static data, stack and the
 * start of the heap); the 8 MB above it is headroom for one evaluation's large blocks, so a single
 * evaluation can reach roughly 20 MB in large strings and arrays before it fails, whatever its
 * `memoryBytes`.
 */
export const ENGINE_MEMORY_MAX_BYTES = 24 * 1024 * 1024;
const ENGINE_MEMORY_INITIAL_BYTES = 16 * 1024 * 1024;
const WASM_PAGE_BYTES = 64 * 1024;

async function instantiate(forGeneration: number): Promise<EngineLease> {
  // A new Memory per instance: a discarded instance keeps its own.
  const wasmMemory = new WebAssembly.Memory({
    initial: ENGINE_MEMORY_INITIAL_BYTES / WASM_PAGE_BYTES,
    maximum: ENGINE_MEMORY_MAX_BYTES / WASM_PAGE_BYTES,
  });
  const [{ newQuickJSWASMModuleFromVariant, newVariant }, { default: releaseSyncVariant }, { default: quickjsWasm }] = await loadQuickJs();
  const variant = newVariant(releaseSyncVariant, {
    wasmModule: quickjsWasm,
    wasmMemory,
    emscriptenModule: countAborts,
  });
  return { module: await newQuickJSWASMModuleFromVariant(variant), generation: forGeneration };
}

let aborts = 0;
// emscripten calls onAbort before it throws the RuntimeError of an abort (a failed assertion); the
// loader options' type does not list it.
const countAborts: EmscriptenModuleLoaderOptions & { onAbort: () => void } = { onAbort: () => void (aborts += 1) };

/**
 * How many times an engine of this isolate aborted (an emscripten abort: a failed QuickJS assertion
 * such as `list_empty(&rt->gc_obj_list)` in JS_FreeRuntime). Every abort is a defect of this folder:
 * the sandbox never frees a runtime that may still own objects. Tests hold it at zero.
 */
export function engineAborts(): number {
  return aborts;
}

/**
 * Engines that belong to one run each (custom index libraries), at most this many at once per
 * isolate. A sliced run awaits between its slices, so runs interleave; sharing one engine would let
 * one run's memory use or abort fail the others. Each costs 16 to 24 MB of WebAssembly memory, out
 * of an isolate's 128 MB, hence the bound: further runs wait for one to end.
 */
export const MAX_PRIVATE_ENGINES = 2;
let privateEngines = 0;
const waiting: (() => void)[] = [];

/**
 * Runs `work` with an engine of its own, instantiated for it and dropped afterwards (never reused,
 * so a run that left its runtime in any state cannot affect another). Waits while
 * {@link MAX_PRIVATE_ENGINES} are in use.
 */
export async function withPrivateEngine<T>(work: (lease: EngineLease) => Promise<T>): Promise<T> {
  while (privateEngines >= MAX_PRIVATE_ENGINES) await new Promise<void>((resolve) => waiting.push(resolve));
  privateEngines += 1;
  try {
    return await work(await instantiate(-1));
  } finally {
    privateEngines -= 1;
    waiting.shift()?.();
  }
}
