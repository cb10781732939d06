/**
 * Token counting for the context budget: tiktoken (cl100k_base, offline) scaled by a ratio measured
 * against the model's own tokenizer at warm-up, so the budget holds for byte-level and BPE vocabularies alike.
 */
import { get_encoding, type Tiktoken } from "tiktoken";
import { TextMemo } from "../runtime/memo.js";

let encoder: Tiktoken | undefined;

function enc(): Tiktoken {
  encoder ??= get_encoding("cl100k_base");
  return encoder;
}

/** tiktoken's count of `text`. */
export function tiktokenCount(text: string): number {
  return text === "" ? 0 : enc().encode_ordinary(text).length;
}

/** A code sample for calibration: identifiers, punctuation, indentation, comments. */
const SAMPLE = `/** Adds two numbers. */
export function add(a: number, b: number): number {
  const total = a + b; // keep it simple
  if (Number.isNaN(total)) throw new Error("not a number");
  return total;
}

export class Registry<T> {
  private readonly items = new Map<string, T>();
  get(name: string): T | undefined {
    return this.items.get(name);
  }
}
`;

/** Texts up to this long are memoised, at most this many (oldest dropped first). */
const MEMO_MAX_CHARS = 512;
const MEMO_ENTRIES = 20_000;

export class TokenCounter {
  /** Model tokens per tiktoken token (1 when no model tokenizer is known). */
  readonly ratio: number;

  constructor(modelTokenize?: (text: string) => readonly unknown[]) {
    enc();
    this.ratio = modelTokenize ? modelTokenize(SAMPLE).length / tiktokenCount(SAMPLE) : 1;
  }

  /** tiktoken counts of short texts (lines, symbol lines) already seen: most lines survive a keystroke unchanged. */
  private readonly memo = new TextMemo<number>(MEMO_ENTRIES);

  /** Estimated model tokens of `text` (rounded up). */
  count(text: string): number {
    if (text.length > MEMO_MAX_CHARS) return Math.ceil(tiktokenCount(text) * this.ratio);
    const n = this.memo.get(text, tiktokenCount);
    return Math.ceil(n * this.ratio);
  }
}
