/**
 * TypeScript's compiler API, loaded with `require`. Imported from an ES module, the CommonJS file
 * would first be scanned whole for its export names (cjs-module-lexer over several megabytes), which
 * doubles what loading the compiler costs an agent at start. Types come from `import type * as TS`.
 */
import { createRequire } from "node:module";
import type * as TS from "typescript";

export const ts = createRequire(import.meta.url)("typescript") as typeof TS;
