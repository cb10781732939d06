/**
 * The model-backed prose summary: the extractive summary and outline as a prompt, the model continues
 * in prose. Same discipline as complete: token budget (tiktoken, calibrated), an inference limit that
 * aborts the llama context, accounting in the payload; on overrun the extractive summary stands, with a warning.
 */
import { AipError, isAipError } from "../../protocol/contract/errors.js";
import type { TokenCounter } from "../lib/llm/budget.js";
import type { ModelEngine } from "../lib/llm/engine.js";
import { EngineError } from "../lib/llm/remote/client.js";
import type { HandlerContext } from "../lib/runtime/types.js";
import type { Outline } from "./outline.js";

/** Default inference limit for a summary (longer than a completion: prose, not a keystroke). */
export const SUMMARY_INFERENCE_MS = 1500;
const HEADROOM_TOKENS = 16;

export interface ModelProse {
  summary: string;
  accounting: {
    prompt_tokens: number;
    kv_reused_tokens: number;
    generated_tokens: number;
    inference_ms: number;
    trimmed_lines: number;
    stop_reason: string;
  };
}

function outlineLines(o: Outline): string[] {
  return [
    ...o.exports.map((e) => `// export ${e.kind} ${e.name}`),
    ...o.functions.map((f) => `// ${f.text}${f.doc ? ` — ${f.doc}` : ""}`),
    ...o.classes.map((c) => `// class ${c.name}${c.doc ? ` — ${c.doc}` : ""}`),
    ...o.types.map((t) => `// ${t.kind} ${t.name}`),
  ];
}

/** Generate the prose summary; undefined when the model is not ready or timed out (a warning says which). */
export async function modelProse(
  host: ModelEngine,
  counter: TokenCounter,
  outline: Outline,
  extractive: string,
  path: string | undefined,
  maxTokens: number,
  limitMs: number,
  ctx: HandlerContext,
): Promise<ModelProse | undefined> {
  if (!host.ready) return undefined;
  const down = host.unavailable();
  if (down !== undefined) {
    host.fallbacks.circuit_open++;
    ctx.warn(
      "AIP_ERR_UNAVAILABLE",
      `The inference server is not answering (${down}); the extractive summary is returned`,
    );
    return undefined;
  }
  const head = `// Module: ${path ?? "(buffer)"}\n// Outline:\n`;
  const tail = `// Extractive summary: ${extractive}\n// Summary in plain English:\n//`;
  let lines = outlineLines(outline);
  const budget = host.contextSize - maxTokens - HEADROOM_TOKENS - counter.count(head) - counter.count(tail);
  let used = 0;
  let kept = 0;
  for (const l of lines) {
    const n = counter.count(`${l}\n`);
    if (used + n > budget) break;
    used += n;
    kept++;
  }
  const trimmed = lines.length - kept;
  lines = lines.slice(0, kept);
  if (trimmed > 0)
    ctx.warn(
      "AIP_ERR_CONTEXT_TRUNCATED",
      `Outline trimmed to fit the model window: ${trimmed} of ${lines.length + trimmed} lines dropped`,
      { trimmed_lines: trimmed },
    );
  const limit = AbortSignal.timeout(limitMs);
  const signal = AbortSignal.any([ctx.signal, limit]);
  const started = performance.now();
  try {
    const gen = await host.generate(host.tokenize(head + lines.map((l) => `${l}\n`).join("") + tail), {
      maxTokens,
      temperature: 0,
      seed: 0,
      stop: ["\n\n", "\n// "],
      signal,
    });
    return {
      summary: gen.text.replace(/\s+/g, " ").trim(),
      accounting: {
        prompt_tokens: gen.promptTokens,
        kv_reused_tokens: gen.kvReused,
        generated_tokens: gen.tokens,
        inference_ms: Math.round(gen.ms * 100) / 100,
        trimmed_lines: trimmed,
        stop_reason: gen.stopReason,
      },
    };
  } catch (err) {
    if (ctx.signal.aborted) throw ctx.signal.reason as Error;
    if (limit.aborted) {
      const took = Math.round(performance.now() - started);
      ctx.warn(
        "AIP_ERR_MODEL_TIMEOUT",
        `Inference took ${took} ms, limit is ${limitMs} ms; the extractive summary is returned`,
        { inference_ms: took, limit_ms: limitMs },
      );
      return undefined;
    }
    if (err instanceof EngineError) {
      host.fallbacks.engine_error++;
      ctx.warn("AIP_ERR_UNAVAILABLE", `${err.message}; the extractive summary is returned`);
      return undefined;
    }
    throw isAipError(err) ? err : new AipError("AIP_ERR_UNKNOWN", `Model inference failed: ${(err as Error).message}`);
  }
}
