/**
 * Token counting for the context budget: tiktoken (cl100k_base, offline) scaled by a ratio measured
 * against the model's own tokenizer at warm-up, so the budget holds for byte-level and BPE vocabularies alike.
 */
import { createRequire } from "node:module";
import type * as TiktokenModule from "tiktoken";
import type { Tiktoken } from "tiktoken";
import { TextMemo } from "../memo.js";

let encoder: Tiktoken | undefined;

/**
 * The shared cl100k_base encoder (also the token format of prompts for an inference server: remote/host.ts).
 * tiktoken compiles its WebAssembly when it is loaded: it is loaded here, by the first count, so that a
 * process that counts nothing (a refused request, `--manifest`) does not pay for it.
 */
export function enc(): Tiktoken {
  encoder ??= (createRequire(import.meta.url)("tiktoken") as typeof TiktokenModule).get_encoding("cl100k_base");
  return encoder;
}

/** Whether the encoder has been loaded in this process (its table takes a large part of a start). */
export function encoderLoaded(): boolean {
  return encoder !== undefined;
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

/** Lines and other short texts are memoised (up to this many); longer texts (a function's rest after the cursor) in a smaller memo. */
const SHORT_MAX_CHARS = 512;
const SHORT_ENTRIES = 20_000;
const LONG_MAX_CHARS = 64 * 1024;
const LONG_ENTRIES = 64;

export class TokenCounter {
  /** Model tokens per tiktoken token (1 when no model tokenizer is known). */
  readonly ratio: number;

  constructor(modelTokenize?: (text: string) => readonly unknown[]) {
    enc();
    this.ratio = modelTokenize ? modelTokenize(SAMPLE).length / tiktokenCount(SAMPLE) : 1;
  }

  /** tiktoken counts of texts already seen: most lines (and the code after the cursor) survive a keystroke unchanged. */
  private readonly short = new TextMemo<number>(SHORT_ENTRIES);
  private readonly long = new TextMemo<number>(LONG_ENTRIES);

  /** Estimated model tokens of `text` (rounded up). */
  count(text: string): number {
    const n =
      text.length <= SHORT_MAX_CHARS
        ? this.short.get(text, tiktokenCount)
        : text.length <= LONG_MAX_CHARS
          ? this.long.get(text, tiktokenCount)
          : tiktokenCount(text);
    return Math.ceil(n * this.ratio);
  }
}
