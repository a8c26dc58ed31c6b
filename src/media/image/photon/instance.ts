/**
 * One photon WASM instance with the few calls the media pipeline needs, made from the compiled
 * module without the package's own glue. The package's glue keeps its instance in a module-level
 * variable that can be set only once, so an instance that trapped (`RuntimeError: unreachable`:
 * every decode error in photon is a Rust panic) or whose memory grew large (WASM memory never
 * shrinks) could never be replaced. Here each instance is an object: dropping it lets the garbage
 * collector reclaim its memory, and the next image gets a fresh one.
 *
 * The imports mirror @cf-wasm/photon 0.4.0's wasm-bindgen glue (`photon_rs.js`); the DOM and canvas
 * imports are never called by these functions and throw if they ever are.
 */

interface PhotonExports {
  memory: WebAssembly.Memory;
  __wbindgen_malloc(size: number, align: number): number;
  __wbindgen_realloc(ptr: number, oldSize: number, newSize: number, align: number): number;
  __wbindgen_free(ptr: number, size: number, align: number): void;
  __wbindgen_start(): void;
  __wbindgen_externrefs: WebAssembly.Table;
  __wbg_photonimage_free(ptr: number, flag: number): void;
  photonimage_new(ptr: number, len: number, width: number, height: number): number;
  photonimage_new_from_byteslice(ptr: number, len: number): number;
  photonimage_get_width(image: number): number;
  photonimage_get_height(image: number): number;
  photonimage_get_raw_pixels(image: number): [number, number];
  photonimage_get_bytes(image: number): [number, number];
  photonimage_get_bytes_jpeg(image: number, quality: number): [number, number];
}

export interface RgbaImage {
  width: number;
  height: number;
  /** width * height * 4 bytes, RGBA. */
  data: Uint8Array;
}

export class PhotonInstance {
  private readonly wasm: PhotonExports;
  /** The last panic message photon reported, for the log line of a failed decode. */
  lastPanic: string | undefined;

  constructor(module: WebAssembly.Module) {
    const imports = buildImports(
      module,
      () => this.wasm,
      (message) => (this.lastPanic = message),
    );
    const instance = new WebAssembly.Instance(module, { "./photon_rs_bg.js": imports });
    this.wasm = instance.exports as unknown as PhotonExports;
    this.wasm.__wbindgen_start();
  }

  /** Bytes of WASM linear memory this instance holds (it only ever grows). */
  get memoryBytes(): number {
    return this.wasm.memory.buffer.byteLength;
  }

  private pass(bytes: Uint8Array): number {
    const ptr = this.wasm.__wbindgen_malloc(bytes.length, 1) >>> 0;
    new Uint8Array(this.wasm.memory.buffer, ptr, bytes.length).set(bytes);
    return ptr;
  }

  private take([ptr, len]: [number, number]): Uint8Array {
    const copy = new Uint8Array(this.wasm.memory.buffer, ptr >>> 0, len).slice();
    this.wasm.__wbindgen_free(ptr, len, 1);
    return copy;
  }

  /** Decodes an encoded image (PNG, GIF, WebP, BMP, JPEG) to RGBA. Throws on corrupt input. */
  decode(encoded: Uint8Array): RgbaImage {
    const ptr = this.pass(encoded);
    const image = this.wasm.photonimage_new_from_byteslice(ptr, encoded.length);
    try {
      const width = this.wasm.photonimage_get_width(image) >>> 0;
      const height = this.wasm.photonimage_get_height(image) >>> 0;
      return { width, height, data: this.take(this.wasm.photonimage_get_raw_pixels(image)) };
    } finally {
      this.wasm.__wbg_photonimage_free(image >>> 0, 0);
    }
  }

  /** Encodes RGBA pixels as JPEG (quality 1..100) or PNG. */
  encode(image: RgbaImage, format: "jpeg" | "png", quality = 85): Uint8Array {
    const ptr = this.pass(image.data);
    const handle = this.wasm.photonimage_new(ptr, image.data.length, image.width, image.height);
    try {
      return this.take(format === "jpeg" ? this.wasm.photonimage_get_bytes_jpeg(handle, quality) : this.wasm.photonimage_get_bytes(handle));
    } finally {
      this.wasm.__wbg_photonimage_free(handle >>> 0, 0);
    }
  }
}

type ImportFunction = (...args: never[]) => unknown;

function buildImports(
  module: WebAssembly.Module,
  wasm: () => PhotonExports,
  onPanic: (message: string) => void,
): Record<string, ImportFunction> {
  const text = (ptr: number, len: number) => new TextDecoder().decode(new Uint8Array(wasm().memory.buffer, ptr >>> 0, len >>> 0));
  /** Writes a string into WASM memory and its (ptr, len) pair at `out`, as wasm-bindgen returns strings. */
  const returnString = (out: number, value: string) => {
    const bytes = new TextEncoder().encode(value);
    const ptr = wasm().__wbindgen_malloc(bytes.length, 1) >>> 0;
    new Uint8Array(wasm().memory.buffer, ptr, bytes.length).set(bytes);
    const view = new DataView(wasm().memory.buffer);
    view.setInt32(out + 4, bytes.length, true);
    view.setInt32(out, ptr, true);
  };
  // Keyed by the import's name without wasm-bindgen's hash suffix.
  const known: Record<string, ImportFunction> = {
    __wbg___wbindgen_throw: ((ptr: number, len: number) => {
      throw new Error(text(ptr, len));
    }) as ImportFunction,
    __wbg___wbindgen_is_undefined: ((value: unknown) => value === undefined) as ImportFunction,
    __wbg___wbindgen_debug_string: ((out: number, value: unknown) => returnString(out, String(value))) as ImportFunction,
    // console_error_panic_hook: new Error(), its stack, then error(message) with the panic text.
    __wbg_new_227d7c05414eb861: (() => new Error()) as ImportFunction,
    __wbg_stack: ((out: number, error: Error) => returnString(out, error.stack ?? "")) as ImportFunction,
    __wbg_error: ((ptr: number, len: number) => {
      try {
        onPanic(text(ptr, len));
      } finally {
        wasm().__wbindgen_free(ptr, len, 1);
      }
    }) as ImportFunction,
    __wbg_new_cd45aabdf6073e84: ((value: ArrayBuffer) => new Uint8Array(value)) as ImportFunction,
    __wbg_length: ((value: { length: number }) => value.length) as ImportFunction,
    __wbg_prototypesetcall: ((ptr: number, len: number, source: Uint8Array) => {
      new Uint8Array(wasm().memory.buffer, ptr >>> 0, len >>> 0).set(source);
    }) as ImportFunction,
    __wbg_random: (() => Math.random()) as ImportFunction,
    __wbindgen_init_externref_table: (() => {
      const table = wasm().__wbindgen_externrefs;
      const offset = table.grow(4);
      table.set(0, undefined);
      table.set(offset, undefined);
      table.set(offset + 1, null);
      table.set(offset + 2, true);
      table.set(offset + 3, false);
    }) as ImportFunction,
  };
  const imports: Record<string, ImportFunction> = {};
  for (const { name, kind } of WebAssembly.Module.imports(module)) {
    if (kind !== "function") continue;
    const stem = name.replace(/_[0-9a-f]{16}$/, "");
    imports[name] =
      known[name] ??
      known[stem] ??
      (() => {
        throw new Error(`photon called ${name}, which this worker does not provide`);
      });
  }
  return imports;
}
