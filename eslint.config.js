import tseslint from "typescript-eslint";

export default tseslint.config(
  // examples/client/api.d.ts and dist/: made by the client example from a running server (gitignored).
  {
    ignores: [
      "node_modules/",
      ".wrangler/",
      // Generated: the test runtimes (vitest.config.ts) and npm test's logs.
      ".dev/",
      "public/",
      "worker-configuration.d.ts",
      "dist/",
      ".bench/",
      "examples/client/api.d.ts",
      "examples/client/dist/",
    ],
  },
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-eval": "error",
      "no-new-func": "error",
      "no-implied-eval": "error",
      // Prettier (npm run format) lays code out at 140 columns but leaves long strings and comments
      // as they are; this keeps every line, those included, within 140.
      "max-len": ["error", { code: 140, tabWidth: 2 }],
    },
  },
  {
    // The sandbox's internals stay behind its index (src/pkg/sandbox/index.ts); only its own files and
    // its own tests reach inside.
    files: ["**/*.ts", "**/*.mjs", "**/*.js"],
    ignores: ["src/pkg/sandbox/**", "test/sandbox/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "(^|/)pkg/sandbox/.+",
              message: "Import the sandbox from src/pkg/sandbox (its index); its other files are internal.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ["scripts/**/*.mjs", "bench/**/*.mjs"],
    languageOptions: { globals: { process: "readonly", console: "readonly", URL: "readonly", fetch: "readonly" } },
  },
);
