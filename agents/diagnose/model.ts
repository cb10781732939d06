/**
 * The model's part of a diagnosis (docs/agents.md, "diagnose"): a one-paragraph explanation of the
 * error and, for a file's error, a corrected version of its line, which the handler sends through the
 * same check as every other fix. Same discipline as summarize's prose: an inference limit that aborts
 * the context, accounting in the payload, and on overrun the answer stands without it (a warning).
 */
import type { ModelHost } from "../lib/llm/host.js";
import type { HandlerContext } from "../lib/runtime/types.js";

/** Default inference limit for a diagnosis's model part. */
export const DIAGNOSE_INFERENCE_MS = 3000;
/** Lines of code around the error in the prompt. */
const PROMPT_LINES = 20;

export interface DiagnoseModel {
  host: ModelHost;
}

export interface ModelPart {
  out: Record<string, unknown>;
  fix?: {
    description: string;
    edit: { start: { line: number; column: number }; end: { line: number; column: number }; new_text: string };
  };
}

async function generate(
  host: ModelHost,
  ctx: HandlerContext,
  prompt: string,
  maxTokens: number,
  limitMs: number,
  stop: string[],
) {
  const limit = AbortSignal.timeout(limitMs);
  const gen = await host.generate(host.tokenize(prompt), {
    maxTokens,
    temperature: 0,
    seed: 0,
    stop,
    signal: AbortSignal.any([ctx.signal, limit]),
  });
  return { gen, timedOut: limit.aborted };
}

export async function modelDiagnosis(
  model: DiagnoseModel,
  ctx: HandlerContext,
  req: {
    message: string;
    line: number;
    text: string;
    maxTokens: number;
    limitMs?: number | undefined;
    explainOnly?: boolean;
  },
): Promise<ModelPart> {
  const lines = req.text.split("\n");
  const from = Math.max(0, req.line - 1 - PROMPT_LINES / 2);
  const shown = lines.slice(from, req.line - 1 + PROMPT_LINES / 2).map((l, i) => `${from + i + 1}: ${l}`);
  const limitMs = Math.min(req.limitMs ?? DIAGNOSE_INFERENCE_MS, Math.max(1, ctx.remainingMs() - 200));
  const base = `// Code:\n${shown.map((l) => `// ${l}`).join("\n")}\n// Error at line ${req.line}: ${req.message}\n`;
  const out: Record<string, unknown> = { used: true };
  const started = performance.now();
  try {
    const ex = await generate(
      model.host,
      ctx,
      `${base}// Explanation of the error in one sentence:\n//`,
      req.maxTokens,
      limitMs,
      ["\n\n", "\n// "],
    );
    out.explanation = ex.gen.text.replace(/\s+/g, " ").trim();
    out.generated_tokens = ex.gen.tokens;
    if (req.explainOnly) return { out: { ...out, inference_ms: Math.round(performance.now() - started) } };
    const original = lines[req.line - 1] ?? "";
    const indent = /^\s*/.exec(original)![0];
    const fx = await generate(
      model.host,
      ctx,
      `${base}// Line ${req.line} corrected:\n${indent}`,
      Math.min(req.maxTokens, 128),
      Math.max(1, limitMs - (performance.now() - started)),
      ["\n"],
    );
    out.inference_ms = Math.round(performance.now() - started);
    const fixed = indent + fx.gen.text.replace(/\s+$/, "");
    if (fixed.trim() === "" || fixed === original) return { out };
    out.fix_line = fixed;
    return {
      out,
      fix: {
        description: `Model: replace line ${req.line}`,
        edit: {
          start: { line: req.line, column: 0 },
          end: { line: req.line, column: original.length },
          new_text: fixed,
        },
      },
    };
  } catch (err) {
    if (ctx.signal.aborted) throw ctx.signal.reason as Error;
    ctx.warn(
      "AIP_ERR_MODEL_TIMEOUT",
      `The model's part of the diagnosis stopped: ${(err as Error).message}; the answer stands without it`,
    );
    return { out: { used: false, reason: `inference failed or ran past ${limitMs} ms` } };
  }
}
