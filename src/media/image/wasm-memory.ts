/**
 * A ceiling on a WASM library's memory. The decoders decide from an image's header whether it fits
 * (its declared size against a pixel limit), but a coded picture may be larger than its container says
 * (an AVIF or HEIC whose `ispe` understates the AV1 or HEVC frame): the library would then grow its
 * memory past the isolate's 128 MB, and the isolate, with every request it serves, would be ended.
 *
 * Emscripten's glue grows memory by calling grow() on the Memory object the module exports; an own
 * grow() on that object refuses growth past the ceiling, so the library's allocation fails and the
 * decoder reports an error, which the caller turns into "too large" when `exceeded` says so.
 */
export interface MemoryCeiling {
  readonly limitBytes: number;
  /** Whether the library asked for more than the ceiling. */
  readonly exceeded: boolean;
  /** The memory's size now. */
  readonly bytes: number;
}

const PAGE = 65536;

export function capMemory(exports: WebAssembly.Exports, limitBytes: number): MemoryCeiling {
  const memory = Object.values(exports).find((value): value is WebAssembly.Memory => value instanceof WebAssembly.Memory);
  if (!memory) throw new Error("the WASM module exports no memory to cap");
  const grow = WebAssembly.Memory.prototype.grow;
  const state = {
    limitBytes,
    exceeded: false,
    get bytes() {
      return memory.buffer.byteLength;
    },
  };
  Object.defineProperty(memory, "grow", {
    value(pages: number): number {
      if (memory.buffer.byteLength + pages * PAGE > limitBytes) {
        state.exceeded = true;
        throw new RangeError(`WASM memory would pass its ${limitBytes / 2 ** 20} MiB ceiling`);
      }
      return grow.call(memory, pages);
    },
  });
  return state;
}
