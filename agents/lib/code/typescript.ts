/**
 * TypeScript's compiler API, loaded with `require` on first use. Imported from an ES module, the
 * CommonJS file would first be scanned whole for its export names (cjs-module-lexer over several
 * megabytes), which doubles what loading the compiler costs. It is loaded on first use, not at import:
 * compiling it is the largest part of a code agent's start, which `--manifest`, a one-shot refusal and
 * vetting never need; a listening agent loads it (and the converter, `warmParser`) before its socket
 * exists (`preload`, agents/lib/runtime/types.ts). Types come from `import type * as TS`.
 */
import { createRequire } from "node:module";
import type * as TS from "typescript";

const require = createRequire(import.meta.url);
let loaded: typeof TS | undefined;

/** The compiler module, loaded now if it is not yet. */
export function typescript(): typeof TS {
  if (loaded === undefined) {
    loaded = require("typescript") as typeof TS;
    // Importers read `ts` through the module's live binding: from now on they get the compiler itself,
    // so the walks and checks on hot paths pay no proxy trap per property read.
    ts = loaded;
  }
  return loaded;
}

/** Whether the compiler has been loaded in this process. */
export function typescriptLoaded(): boolean {
  return loaded !== undefined;
}

/**
 * The compiler's namespace, `ts.SyntaxKind`, `ts.createSourceFile`, …: until the compiler is loaded, a
 * stand-in whose first property read loads it; then the compiler module itself.
 */
export let ts: typeof TS = new Proxy({} as typeof TS, {
  get: (_, key) => (typescript() as unknown as Record<string | symbol, unknown>)[key],
  has: (_, key) => key in typescript(),
});
