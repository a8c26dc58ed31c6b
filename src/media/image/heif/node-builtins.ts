/**
 * What `require("fs")` and `require("path")` resolve to in the Worker's bundle (wrangler.toml,
 * [alias]). libheif-js's Emscripten glue names them on its Node.js path only, which never runs on
 * Workers (it checks for `process.versions.node` first), but the bundler must still resolve them.
 */
export default {};
