/**
 * Prompt assembly. Layout, most stable first so the model's KV cache is reused across requests:
 *   header (language, file) · CURRENT_SYMBOLS (module scope, sorted, no line numbers) · farther code ·
 *   LOCAL_SYMBOLS (scope at the cursor) · enclosing function up to the cursor  [· suffix for FIM]
 */
import type { SymbolEntry } from "../lib/code/symbols.js";

export function headerText(language: string, path: string | undefined): string {
  return `// Language: ${language}\n${path !== undefined ? `// File: ${path}\n` : ""}`;
}

function symbolLine(s: SymbolEntry): string {
  const detail =
    s.kind === "import"
      ? ` from "${s.source ?? ""}"${s.detail && s.detail !== s.name ? ` (${s.detail})` : ""}`
      : s.detail
        ? `: ${s.detail}`
        : "";
  return `${s.kind} ${s.name}${detail}`.replace(/\s+/g, " ").slice(0, 160);
}

const BLOCKS = new WeakMap<SymbolEntry[], string>();

/** The CURRENT_SYMBOLS block: one comment line per symbol, in the symbol table's stable order (memoised per table). */
export function symbolsBlock(symbols: SymbolEntry[]): string {
  if (symbols.length === 0) return "";
  let block = BLOCKS.get(symbols);
  if (block === undefined) {
    block = `// CURRENT_SYMBOLS\n${symbols.map((s) => `// ${symbolLine(s)}\n`).join("")}// END_SYMBOLS\n`;
    BLOCKS.set(symbols, block);
  }
  return block;
}

/** Names in scope at the cursor below module level, sorted: one comment line placed before the kept code. */
export function localSymbolsLine(symbols: SymbolEntry[]): string {
  const local = symbols
    .filter((s) => s.scope_depth > 0)
    .map((s) => `${s.name}${s.detail && s.kind !== "import" ? `: ${s.detail}` : ""}`);
  return local.length ? `// LOCAL_SYMBOLS: ${local.join(", ").replace(/\s+/g, " ").slice(0, 400)}\n` : "";
}

export interface PromptParts {
  header: string;
  symbols: string;
  before: string;
  locals: string;
  keptBefore: string;
  keptAfter: string;
  after: string;
  /** `before` and `after` cut into file chunks (context.ts CHUNK_LINES), for tokenising piece by piece. */
  beforeChunks?: string[];
  afterChunks?: string[];
}

/** The text before the cursor (everything the model reads first). */
export function prefixText(p: PromptParts): string {
  return p.header + p.symbols + p.before + p.locals + p.keptBefore;
}

/** The text after the cursor (FIM only). */
export function suffixText(p: PromptParts): string {
  return p.keptAfter + p.after;
}
