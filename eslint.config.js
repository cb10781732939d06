import js from "@eslint/js";
import tseslint from "typescript-eslint";
import layers from "./eslint/layers.js";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "run/", "bench/results/", "test/fixtures/", "eslint.config.js", "eslint/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    plugins: { layers },
    languageOptions: {
      // One program from tsconfig.json for every file, built once: the project service (the editor's
      // way, a project per opened file) does the same work here with more CPU and memory.
      parserOptions: { project: "./tsconfig.json", tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-console": "error",
      "layers/imports-down": "error",
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex:
                "^(fs|path|net|http|os|child_process|crypto|events|stream|url|util|zlib|tls|dgram|dns|readline|worker_threads|timers|buffer|string_decoder|diagnostics_channel|perf_hooks)(/.*)?$",
              message: "Use the node: prefix.",
            },
          ],
        },
      ],
    },
  },
  {
    // The composition root composes; the parts it composes live in their own files (docs/architecture.md).
    files: ["orchestrator/orchestrator.ts"],
    rules: { "max-lines": ["error", { max: 200 }] },
  },
  {
    // Tests read response bodies loosely in assertions.
    files: ["test/**/*.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
  {
    // CLI entry points and tools talk to a terminal.
    files: ["scripts/**/*.ts", "tools/**/*.ts", "bench/**/*.ts", "test/**/*.ts"],
    rules: { "no-console": "off" },
  },
);
