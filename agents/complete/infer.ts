/** Inference with the syntax check: up to 2 retries with another seed; the inference limit aborts the llama context. */
import { AipError } from "../../protocol/contract/errors.js";
import type { Token } from "node-llama-cpp";
import type { Dialect } from "../lib/code/language.js";
import { DeadlineAbort, type ModelEngine } from "../lib/llm/engine.js";
import type { GenerateOptions, Generation } from "../lib/llm/host.js";
import { checkSplice, type CheckResult, type SpliceBase } from "./check.js";

export const MAX_RETRIES = 2;
/** Retries sample with this temperature (the first attempt is greedy). */
const RETRY_TEMPERATURE = 0.8;

export interface Attempt {
  seed: number;
  temperature: number;
  gen: Generation;
  check: CheckResult;
}

export interface InferInput {
  host: ModelEngine;
  prompt: Token[];
  maxTokens: number;
  stop: string[];
  seed: number;
  limitMs: number;
  signal: AbortSignal;
  source: string;
  offset: number;
  dialect: Dialect;
  /** The buffer's parse (region boundaries for the syntax check). */
  base: SpliceBase | undefined;
  /** The model call; default `host.generate` (the warm-up's dry keystrokes pass a canned completion). */
  generate?: (prompt: Token[], options: GenerateOptions) => Promise<Generation>;
  /** The syntax gate for another language than TypeScript's (Python's): replaces the splice check. */
  check?: (text: string) => CheckResult;
  /** Told when the request starts (true) and stops (false) waiting for the model (prewarm.ts works only then). */
  waiting?: ((waiting: boolean) => void) | undefined;
}

export interface InferResult {
  attempts: Attempt[];
  ok?: Attempt;
  best?: Attempt;
  inferenceMs: number;
  syntaxMs: number;
}

class InferenceLimit extends DeadlineAbort {}

/** Generate, check, retry; throws AIP_ERR_MODEL_TIMEOUT when inference passes its limit, or the signal's reason. */
export async function infer(input: InferInput): Promise<InferResult> {
  const attempts: Attempt[] = [];
  let inferenceMs = 0;
  let syntaxMs = 0;
  const started = performance.now();
  // One limit for all attempts together: the stage's budget is the inference time of the request.
  const limit = new AbortController();
  const timer = setTimeout(() => limit.abort(new InferenceLimit()), input.limitMs);
  const signal = AbortSignal.any([input.signal, limit.signal]);
  try {
    for (let i = 0; i <= MAX_RETRIES; i++) {
      const temperature = i === 0 ? 0 : RETRY_TEMPERATURE;
      const seed = input.seed + i;
      const t0 = performance.now();
      let gen: Generation;
      input.waiting?.(true);
      try {
        const options = { maxTokens: input.maxTokens, temperature, seed, stop: input.stop, signal };
        gen = await (input.generate
          ? input.generate(input.prompt, options)
          : input.host.generate(input.prompt, options));
      } catch (err) {
        if (limit.signal.aborted && !input.signal.aborted) {
          const took = Math.round(performance.now() - started);
          throw new AipError("AIP_ERR_MODEL_TIMEOUT", `Inference took ${took} ms, limit is ${input.limitMs} ms`, {
            suggestion: "Reduce context length or max_tokens, raise constraints.timeout_ms, or use a smaller model",
            extensions: { inference_ms: took, limit_ms: input.limitMs, attempts: attempts.length + 1 },
          });
        }
        throw input.signal.aborted ? (input.signal.reason as Error) : err;
      } finally {
        input.waiting?.(false);
      }
      inferenceMs += performance.now() - t0;
      const t1 = performance.now();
      const check = input.check
        ? input.check(gen.text)
        : await checkSplice(input.source, input.offset, gen.text, input.dialect, input.base);
      syntaxMs += performance.now() - t1;
      const attempt = { seed, temperature, gen, check };
      attempts.push(attempt);
      if (check.ok) return { attempts, ok: attempt, best: attempt, inferenceMs, syntaxMs };
      input.signal.throwIfAborted();
    }
  } finally {
    clearTimeout(timer);
  }
  const best = attempts.reduce((a, b) => (b.check.score > a.check.score ? b : a));
  return { attempts, best, inferenceMs, syntaxMs };
}
