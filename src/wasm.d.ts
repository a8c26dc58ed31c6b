/**
 * A .wasm file imported by path is a compiled module (wrangler's CompiledWasm rule, Vite's wasm
 * handling in the tests). Packages that ship their own declaration for their .wasm keep it.
 */
declare module "*.wasm" {
  const module: WebAssembly.Module;
  export default module;
}
