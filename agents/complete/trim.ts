/**
 * The token budget: the prompt must fit the model window minus max_tokens minus headroom. Counted with
 * tiktoken (calibrated to the model), farthest code trimmed first, the kept code trimmed only when it
 * alone does not fit; then checked exactly with the model's tokenizer and re-trimmed if the estimate was short.
 */
import type { Token } from "node-llama-cpp";
import type { TokenCounter } from "../lib/llm/budget.js";
import type { ModelEngine } from "../lib/llm/engine.js";
import { firstAbove } from "../lib/code/position.js";
import { detach } from "../lib/memo.js";
import { fillOuter, type CodeContext } from "./context.js";
import { prefixText, suffixText, type PromptParts } from "./prompt.js";

/** Tokens left free besides max_tokens: BOS, FIM markers and estimation slack. */
export const HEADROOM_TOKENS = 16;

export interface TrimInput {
  host: ModelEngine;
  counter: TokenCounter;
  useFim: boolean;
  window: number;
  maxTokens: number;
  code: CodeContext;
  header: string;
  symbols: string;
  locals: string;
}

export interface ContextAccounting {
  /** Estimated model tokens per context source (tiktoken × the calibrated ratio). */
  tokens_by_source: {
    header: number;
    symbols: number;
    local_symbols: number;
    enclosing_code: number;
    prefix: number;
    suffix: number;
  };
  budget_tokens: number;
  tiktoken_ratio: number;
  trimmed: { prefix_lines: number; suffix_lines: number; symbols: number; kept_lines: number };
  lines_included: { prefix: number; suffix: number };
  truncated: boolean;
}

export interface Trimmed {
  tokens: Token[];
  prefix: string;
  suffix: string;
  truncated: boolean;
  accounting: ContextAccounting;
}

/**
 * The prompt's tokens. When the vocabulary allows it (ModelEngine.piecewise) the text is tokenised in
 * pieces cut at line starts, and every piece but the cursor's line is remembered
 * (ModelEngine.tokenizeStable): between two keystrokes only that line changes, and llama.cpp's
 * tokenizer costs ~50-100 µs a call plus ~0.5 µs a character here. The farther code goes in file
 * chunks (context.ts), the same texts wherever the cursor is: prewarm.ts tokenises them ahead.
 */
function tokenizePrefix(host: ModelEngine, p: PromptParts): Token[] {
  if (!host.piecewise) return host.tokenize(prefixText(p));
  const cut = p.keptBefore.lastIndexOf("\n") + 1;
  // header + symbols stay the same when the cursor moves to another function; the farther code does not.
  const out = [...host.tokenizeStable(p.header + p.symbols)];
  for (const chunk of p.beforeChunks ?? [p.before]) out.push(...host.tokenizeStable(chunk));
  out.push(
    ...host.tokenizeStable(p.locals),
    ...host.tokenizeStable(p.keptBefore.slice(0, cut)),
    ...host.tokenize(p.keptBefore.slice(cut)),
  );
  return out;
}

function tokenizeSuffix(host: ModelEngine, p: PromptParts): Token[] {
  if (!host.piecewise) return host.tokenize(suffixText(p));
  const cut = p.keptAfter.indexOf("\n") + 1 || p.keptAfter.length;
  const out = [...host.tokenize(p.keptAfter.slice(0, cut)), ...host.tokenizeStable(p.keptAfter.slice(cut))];
  for (const chunk of p.afterChunks ?? [p.after]) out.push(...host.tokenizeStable(chunk));
  return out;
}

/** Per counter, the last CURRENT_SYMBOLS block's lines and running token counts: the block is the same text from one keystroke to the next. */
const SYMBOL_COUNTS = new WeakMap<TokenCounter, { block: string; lines: string[]; upTo: number[] }>();

function symbolCounts(block: string, counter: TokenCounter): { lines: string[]; upTo: number[] } {
  const last = SYMBOL_COUNTS.get(counter);
  if (last?.block === block) return last;
  const lines = block === "" ? [] : block.split(/(?<=\n)/).slice(1, -1);
  const upTo = [0];
  for (const line of lines) upTo.push(upTo[upTo.length - 1]! + counter.count(line));
  const entry = { block: detach(block), lines: lines.map(detach), upTo };
  SYMBOL_COUNTS.set(counter, entry);
  return entry;
}

/** Fit the context into the window. */
export function trimToBudget(input: TrimInput): Trimmed {
  const { host, counter, useFim, window, maxTokens, code, header } = input;
  const count = (t: string): number => counter.count(t);
  let budget = window - maxTokens - HEADROOM_TOKENS;
  let shrink = 0;
  for (let round = 0; ; round++) {
    const avail = budget - shrink;
    const keptAfter = useFim ? code.keptAfter : "";
    const base = count(header) + count(input.locals) + count(keptAfter);
    // The kept code first (from the cursor upwards), trimmed only when it alone does not fit.
    const keptLines = code.keptBefore.split(/(?<=\n)/);
    let keptFrom = 0;
    let keptTokens = keptLines.reduce((n, l) => n + count(l), 0);
    while (base + keptTokens > avail && keptFrom < keptLines.length - 1) keptTokens -= count(keptLines[keptFrom++]!);
    const keptBefore = keptLines.slice(keptFrom).join("");
    const droppedKept = keptFrom;
    // Then the symbols, at most a quarter of the budget (code near the cursor matters more); the block's last lines go first.
    const { lines: symbolLines, upTo } = symbolCounts(input.symbols, counter);
    const frame = input.symbols === "" ? 0 : count("// CURRENT_SYMBOLS\n// END_SYMBOLS\n");
    const symbolRoom = Math.min(avail - base - keptTokens, Math.floor(avail / 4)) - frame;
    // The most lines whose tokens fit: upTo[k] is the count of the first k lines (non-decreasing).
    const keepSymbols = Math.max(0, firstAbove(upTo, symbolRoom) - 1);
    const symbolTokens = upTo[keepSymbols]!;
    const droppedSymbols = symbolLines.length - keepSymbols;
    const symbols =
      keepSymbols > 0 ? `// CURRENT_SYMBOLS\n${symbolLines.slice(0, keepSymbols).join("")}// END_SYMBOLS\n` : "";
    const fixed = base + keptTokens + (keepSymbols > 0 ? symbolTokens + frame : 0);
    const fill = fillOuter(code, Math.max(0, avail - fixed), count, useFim);
    const parts: PromptParts = {
      header,
      symbols,
      before: code.outerBefore.text(fill.beforeFrom),
      locals: input.locals,
      keptBefore,
      keptAfter,
      after: useFim ? code.outerAfter.text(0, fill.afterCount) : "",
      beforeChunks: code.outerBefore.chunks(fill.beforeFrom),
      afterChunks: useFim ? code.outerAfter.chunks(0, fill.afterCount) : [],
    };
    const prefix = prefixText(parts);
    const suffix = useFim ? suffixText(parts) : "";
    const tokens = useFim
      ? host.fimPrompt(tokenizePrefix(host, parts), tokenizeSuffix(host, parts))
      : tokenizePrefix(host, parts);
    const exact = tokens.length + 1; // + BOS
    if (exact > window - maxTokens - 4 && round < 3 && avail > 0) {
      // The estimate was short: shrink by the overshoot (plus a margin) and fill again.
      shrink += Math.ceil((exact - (window - maxTokens - 4)) * 1.2) + 8;
      continue;
    }
    const trimmed = {
      prefix_lines: fill.beforeFrom,
      suffix_lines: useFim ? code.outerAfter.length - fill.afterCount : 0,
      symbols: droppedSymbols,
      kept_lines: droppedKept,
    };
    const truncated = trimmed.prefix_lines + trimmed.suffix_lines + trimmed.symbols + trimmed.kept_lines > 0;
    budget = avail;
    return {
      tokens,
      prefix,
      suffix,
      truncated,
      accounting: {
        tokens_by_source: {
          header: count(header),
          symbols: keepSymbols > 0 ? symbolTokens + frame : 0,
          local_symbols: count(input.locals),
          enclosing_code: keptTokens + count(keptAfter),
          prefix: fill.beforeTokens,
          suffix: fill.afterTokens,
        },
        budget_tokens: budget,
        tiktoken_ratio: Math.round(counter.ratio * 1000) / 1000,
        trimmed,
        lines_included: { prefix: code.outerBefore.length - fill.beforeFrom, suffix: fill.afterCount },
        truncated,
      },
    };
  }
}
