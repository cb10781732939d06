/**
 * Prompt assembly. Layout, most stable first so the model's KV cache is reused across requests:
 *   header (language, file) · CURRENT_SYMBOLS (module scope, sorted, no line numbers) · farther code ·
 *   LOCAL_SYMBOLS (scope at the cursor) · enclosing function up to the cursor  [· suffix for FIM]
 */
import type { SymbolEntry } from "../lib/code/symbols.js";
import type { TypedAnswer } from "../lib/completion/typed.js";

/** The typed context line's length cap (characters). */
export const TYPED_CONTEXT_CHARS = 600;

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

/**
 * What the checker knows at the cursor, one comment line placed before the kept code: after `expr.` the
 * receiver's members as the typed engine ranks them (`// MEMBERS: add(item: string): void; size: number`),
 * elsewhere the names in scope with their signatures (`// IN_SCOPE: …`). Empty without an answer.
 */
export function typedContextLine(answer: TypedAnswer | undefined): string {
  if (!answer || answer.items.length === 0) return "";
  const parts = answer.items.map((i) => {
    const text = (i.signature ?? i.label).replace(/^\([\w ]+\) /, "");
    // `Store.add(item: string): void` → `add(item: string): void`.
    const at = text.indexOf(`.${i.label}`);
    return answer.context === "member" && at >= 0 && !/[(:]/.test(text.slice(0, at)) ? text.slice(at + 1) : text;
  });
  let line = `// ${answer.context === "member" ? "MEMBERS" : "IN_SCOPE"}: `;
  for (const [k, p] of parts.entries()) {
    const next = `${k > 0 ? "; " : ""}${p}`;
    if (line.length + next.length > TYPED_CONTEXT_CHARS) break;
    line += next;
  }
  return `${line}\n`;
}
