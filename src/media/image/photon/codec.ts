/**
 * The isolate's photon instance: instantiated on the first image (never at startup), replaced after
 * any failure (a trapped instance is unusable) and dropped when its memory grew large, since WASM
 * memory is only returned when the instance itself is collected.
 */
// A relative path ending in .wasm matches wrangler's CompiledWasm rule and bypasses export maps in
// Vite too (see src/pkg/sandbox/engine.ts); workerd compiles it at load, nothing instantiates it then.
// The package's own .wasm.d.ts types the file as an instance's exports, so the default export (the
// compiled module, under CompiledWasm) is read through the namespace.
import * as photonWasmModule from "../../../../node_modules/@cf-wasm/photon/dist/lib/photon_rs_bg.wasm";
import { PHOTON_RETAIN_BYTES } from "../limits";
import { PhotonInstance } from "./instance";

const photonWasm = (photonWasmModule as unknown as { default: WebAssembly.Module }).default;

let current: PhotonInstance | undefined;

export interface PhotonStats {
  /** Instances created in this isolate so far. */
  instantiations: number;
  /** Instances dropped after a failure. */
  dropsAfterFailure: number;
  /** Instances dropped because their memory grew past PHOTON_RETAIN_BYTES. */
  dropsForMemory: number;
  /** The largest WASM memory any instance reached, in bytes. */
  peakMemoryBytes: number;
  /** The live instance's memory (0 when none). */
  memoryBytes: number;
}

const stats: Omit<PhotonStats, "memoryBytes"> = { instantiations: 0, dropsAfterFailure: 0, dropsForMemory: 0, peakMemoryBytes: 0 };

/** Runs `work` with the isolate's photon instance, creating, replacing or dropping it as above. */
export function withPhoton<T>(work: (photon: PhotonInstance) => T): T {
  if (!current) {
    current = new PhotonInstance(photonWasm);
    stats.instantiations++;
  }
  const photon = current;
  try {
    return work(photon);
  } catch (error) {
    current = undefined;
    stats.dropsAfterFailure++;
    throw error;
  } finally {
    stats.peakMemoryBytes = Math.max(stats.peakMemoryBytes, photon.memoryBytes);
    if (current === photon && photon.memoryBytes > PHOTON_RETAIN_BYTES) {
      current = undefined;
      stats.dropsForMemory++;
    }
  }
}

export function photonStats(): PhotonStats {
  return { ...stats, memoryBytes: current?.memoryBytes ?? 0 };
}
