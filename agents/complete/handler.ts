/** The complete action with a model: accept → slice → prompt → budget → inference ⇄ syntax (≤ 2 retries) → response. */
import { createHash } from "node:crypto";
import { actionInput } from "../../protocol/contract/actions.js";
import { AipError } from "../../protocol/contract/errors.js";
import type { AipRequest } from "../../protocol/contract/schemas.js";
import { ParseCache } from "../lib/code/cache.js";
import { guardHandler } from "../lib/code/parse.js";
import { LineStartsCache } from "../lib/code/position.js";
import { detach } from "../lib/memo.js";
import type { TokenCounter } from "../lib/llm/budget.js";
import type { FallbackReason, ModelEngine } from "../lib/llm/engine.js";
import { EngineError } from "../lib/llm/remote/client.js";
import type { LatestWins } from "../../protocol/transport/latest.js";
import type { HandlerContext } from "../lib/runtime/types.js";
import { modelCompletion } from "./answer.js";
import { infer, type Attempt, type InferInput, type InferResult } from "./infer.js";
import type { CompletionLanguage, LiteWhy, PromptText, Sliced } from "./language.js";
import type { Prewarm } from "./prewarm.js";
import { typedContextLine } from "./prompt.js";
import { checkedFileOf, type TypedEngine } from "../lib/completion/engine.js";
import { Stages, STAGE_BUDGETS_MS } from "./stages.js";
import { trimToBudget, type Trimmed } from "./trim.js";
import { isPythonRequest } from "../lib/completion/python/handler.js";
import { pythonCompletion } from "./python.js";
import { typescriptLanguage } from "./typescript.js";

export interface CompleteDeps {
  host: ModelEngine;
  counter: () => TokenCounter;
  latest: LatestWins;
  cache?: ParseCache;
  /** The model-free engine (complete-lite's), used without a model when the caller asks for it with `constraints.fallback: "lite"`. */
  lite?: (request: AipRequest, ctx: HandlerContext) => Promise<unknown>;
  /** Tokenises the buffer ahead in idle time (prewarm.ts); told when a request is in a non-model stage. */
  prewarm?: Prewarm;
  /** Replaces the model call (see InferInput.generate). */
  generate?: InferInput["generate"];
  /** The typed engine (complete-lite's checker): the receiver's members and the signatures in scope go into the prompt. */
  typed?: TypedEngine;
}

/** How long a request waits for the checker's context by default (ms): past it the prompt goes without it. */
export const TYPED_CONTEXT_WAIT_MS = 40;
/** Items of the checker's answer put in the prompt, and how many of them with their signature. */
const TYPED_CONTEXT_ITEMS = 12;
const TYPED_CONTEXT_SIGNATURES = 8;

/** Kept back from the deadline for the syntax check and the response (their budgets, plus scheduling slack). */
const RESPONSE_RESERVE_MS = 25;

/** The last stable prefix's sha1: the symbols block (large on a long file) is the same string from one keystroke to the next. */
let lastStable: { header: string; symbols: string; sha1: string } | undefined;

function stableSha1(header: string, symbols: string): string {
  if (lastStable?.header === header && lastStable.symbols === symbols) return lastStable.sha1;
  const sha1 = createHash("sha1")
    .update(header + symbols)
    .digest("hex");
  lastStable = { header: detach(header), symbols: detach(symbols), sha1 };
  return sha1;
}

type Constraints = ReturnType<typeof actionInput<"complete">>["constraints"];
type Json = Record<string, unknown>;
/** The model-free engine's answer in place of the model's, saying why (counted per reason in /healthz and /metrics). */
type Fallback = (why: LiteWhy & { reason: FallbackReason }, detail: string, extra?: Json) => Promise<unknown>;

/**
 * The model-backed complete handler, a request through its stages: accept (a model, or the answer
 * without one), slice, prompt (the symbol table), the checker's context, budget, inference ⇄ syntax
 * (the gate and its retries, or the model-free fallback), response. Slice, prompt and the gate's parse
 * are the buffer's language's (language.ts); the rest is the same for every language.
 */
export function createComplete(deps: CompleteDeps) {
  const typescript = typescriptLanguage(deps.cache ?? new ParseCache());
  const lines = new LineStartsCache();
  return guardHandler(async (request: AipRequest, ctx: HandlerContext): Promise<unknown> =>
    isPythonRequest(request)
      ? completeWith(deps, pythonCompletion, lines, request, ctx)
      : completeWith(deps, typescript, lines, request, ctx),
  );
}

/** One request through the pipeline, with `lang`'s slice, prompt and gate. */
async function completeWith<S extends Sliced>(
  deps: CompleteDeps,
  lang: CompletionLanguage<S>,
  lines: LineStartsCache,
  request: AipRequest,
  ctx: HandlerContext,
): Promise<unknown> {
  const stages = new Stages(ctx);
  const { host } = deps;
  const c = actionInput("complete", request).constraints;
  if (!host.ready) return answerWithoutModel(deps, lang, request, ctx, c);
  const fallback = liteFallback(deps, lang, request, ctx);
  const down = host.unavailable();
  if (down !== undefined && fallback) return fallback({ reason: "circuit_open", detail: down }, down);
  const ticket = deps.latest.claim(request, ctx.traceId);
  const signal = AbortSignal.any([ctx.signal, ticket.signal]);
  const { prewarm } = deps;
  prewarm?.enter();
  let buffer: { source: string; starts: readonly number[] } | undefined;
  try {
    stages.end("accept", signal);

    const { source, loc } = await lang.read(request);
    const starts = lines.get(source);
    buffer = { source, starts };
    const sliced = await lang.slice(request, source, starts, loc);
    stages.end("slice", signal);

    const prompt = lang.prompt(sliced);
    stages.end("prompt", signal);

    const typedFile = checkedFileOf(sliced.loc);
    if (deps.typed && typedFile) prompt.locals += await typedContext(deps.typed, typedFile, sliced, c, ctx);

    const budget = fitToWindow(deps, sliced, prompt, c, ctx);
    stages.end("budget", signal);

    let result: InferResult;
    try {
      result = await inferAndCheck(deps, lang, sliced, budget.trimmed, c, ctx, signal);
    } catch (err) {
      // An inference server that failed (not a deadline, not a cancellation): the editor still gets an
      // answer; a language whose answers are never an error falls back on any failure of the call.
      const failed = err instanceof EngineError || (lang.liteReason !== undefined && !signal.aborted);
      if (failed && fallback) return await fallback({ reason: "engine_error", error: err }, (err as Error).message);
      throw err;
    }
    ctx.timer.mark("inference"); // advances the timer; the exact split is set below
    ctx.timer.set("inference", result.inferenceMs);
    ctx.timer.set("syntax", result.syntaxMs);
    stages.total("inference", result.inferenceMs);
    stages.total("syntax", result.syntaxMs);
    const attempts = attemptsReport(result);
    const chosen: Attempt | undefined = result.ok ?? ((c.best_effort ?? false) ? result.best : undefined);
    if (!chosen) return await syntaxGateFailed(result, attempts, fallback);

    const payload = completionPayload(host, lang, sliced, prompt, budget, result, chosen, attempts, c, stages);
    stages.end("response", signal);
    if (stages.overruns.length)
      ctx.log.info({ event: "stage_over_budget", overruns: stages.overruns }, "stage over budget");
    return payload;
  } finally {
    ticket.release();
    // The next keystroke's cursor may be anywhere in this buffer: tokenise it ahead while idle.
    if (buffer) prewarm?.schedule(buffer.source, buffer.starts);
    prewarm?.leave();
  }
}

/**
 * Accept without a model: complete-lite's answer when the caller asks for it (or the language never
 * answers with an error), else AIP_ERR_UNAVAILABLE.
 */
async function answerWithoutModel<S extends Sliced>(
  deps: CompleteDeps,
  lang: CompletionLanguage<S>,
  request: AipRequest,
  ctx: HandlerContext,
  c: Constraints,
): Promise<unknown> {
  const { host } = deps;
  const status = host.state.status;
  const reason = status === "none" || status === "failed" ? host.state.reason : "the model is still loading";
  if ((c.fallback === "lite" || lang.liteReason) && deps.lite) {
    const out = (await deps.lite(request, ctx)) as Json;
    const why = lang.liteReason?.({ reason: "no_model", status, detail: reason });
    return { ...out, engine: "lite", ...(why !== undefined ? { engine_reason: why } : {}), model_state: status };
  }
  throw new AipError("AIP_ERR_UNAVAILABLE", `agent-complete has no model: ${reason}`, {
    suggestion:
      'Route complete to complete-lite (the orchestrator does this for a degraded agent), send constraints.fallback "lite", or set AIP_MODEL to a .gguf file',
    extensions: { model_state: status },
  });
}

/** The model-free fallback (undefined without a model-free engine), with the language's `engine_reason` where it gives one. */
function liteFallback<S extends Sliced>(
  deps: CompleteDeps,
  lang: CompletionLanguage<S>,
  request: AipRequest,
  ctx: HandlerContext,
): Fallback | undefined {
  const { host, lite } = deps;
  if (!lite) return undefined;
  return async (why, detail, extra = {}) => {
    const { reason } = why;
    host.fallbacks[reason]++;
    ctx.log.info({ event: "model_fallback", reason, detail }, "answered by the model-free engine");
    const out = (await lite(request, ctx)) as Json;
    const engineReason = lang.liteReason?.(why);
    return {
      ...out,
      engine: "lite",
      reason,
      reason_detail: detail,
      ...(engineReason !== undefined ? { engine_reason: engineReason } : {}),
      ...extra,
    };
  };
}

/**
 * The checker's context for the prompt: members of the receiver's type, signatures in scope; empty
 * when the checker does not answer within its wait.
 */
async function typedContext(
  typed: TypedEngine,
  file: { root: string; path: string },
  { source, offset }: Sliced,
  c: Constraints,
  ctx: HandlerContext,
): Promise<string> {
  const wait = Math.min(c.typed_wait_ms ?? TYPED_CONTEXT_WAIT_MS, Math.max(0, ctx.remainingMs() / 4));
  const r = await typed.complete(
    {
      root: file.root,
      path: file.path,
      text: source,
      offset,
      limit: TYPED_CONTEXT_ITEMS,
      details: TYPED_CONTEXT_SIGNATURES,
    },
    wait,
    ctx.log,
  );
  const line = "answer" in r ? typedContextLine(r.answer) : "";
  if (!("answer" in r))
    ctx.log.debug({ event: "typed_context", reason: r.reason }, "prompt without the checker's context");
  ctx.timer.mark("typed");
  return line;
}

/** Budget: the prompt's tokens trimmed to the model's window; AIP_ERR_CONTEXT_TRUNCATED when trimming is not allowed. */
function fitToWindow(
  deps: CompleteDeps,
  { code }: Sliced,
  { header, symbols, locals }: PromptText,
  c: Constraints,
  ctx: HandlerContext,
): { trimmed: Trimmed; useFim: boolean; window: number; maxTokens: number } {
  const { host } = deps;
  const maxTokens = c.max_tokens ?? 64;
  const counter = deps.counter();
  const useFim = host.fim.format === "fim";
  const window = host.contextSize;
  const trimmed = trimToBudget({ host, counter, useFim, window, maxTokens, code, header, symbols, locals });
  if (trimmed.truncated) {
    const dropped = trimmed.accounting.trimmed;
    const detail = `Context trimmed to fit the model window: ${window} tokens minus max_tokens ${maxTokens} minus headroom; dropped ${dropped.prefix_lines} lines before and ${dropped.suffix_lines} lines after the kept code${dropped.symbols ? `, ${dropped.symbols} symbols` : ""}${dropped.kept_lines ? `, and ${dropped.kept_lines} lines of the enclosing function` : ""}`;
    if (!(c.allow_truncation ?? true))
      throw new AipError("AIP_ERR_CONTEXT_TRUNCATED", detail, {
        extensions: { window, max_tokens: maxTokens, trimmed: dropped },
      });
    ctx.warn("AIP_ERR_CONTEXT_TRUNCATED", detail, { trimmed: dropped });
  }
  return { trimmed, useFim, window, maxTokens };
}

/** Inference ⇄ syntax: the model's completions, each through the syntax gate, retried up to its limit within the inference budget. */
async function inferAndCheck<S extends Sliced>(
  deps: CompleteDeps,
  lang: CompletionLanguage<S>,
  sliced: S,
  trimmed: Trimmed,
  c: Constraints,
  ctx: HandlerContext,
  signal: AbortSignal,
): Promise<InferResult> {
  const { host, prewarm } = deps;
  const inferenceLimit = c.inference_timeout_ms ?? STAGE_BUDGETS_MS.inference;
  return infer({
    host,
    prompt: trimmed.tokens,
    maxTokens: c.max_tokens ?? 64,
    stop: c.stop ?? ["\n\n"],
    seed: c.seed ?? 0,
    limitMs: Math.min(inferenceLimit, Math.max(1, ctx.remainingMs() - RESPONSE_RESERVE_MS)),
    signal,
    source: sliced.source,
    offset: sliced.offset,
    ...lang.gate(sliced),
    ...(deps.generate ? { generate: deps.generate } : {}),
    waiting: prewarm && ((w) => (w ? prewarm.leave() : prewarm.enter())),
  });
}

/** Each attempt of the model as the response reports it. */
function attemptsReport(result: InferResult) {
  return result.attempts.map((a) => ({
    seed: a.seed,
    temperature: a.temperature,
    generated_tokens: a.gen.tokens,
    kv_reused_tokens: a.gen.kvReused,
    stop_reason: a.gen.stopReason,
    sequence: a.gen.sequence,
    inference_ms: Math.round(a.gen.ms * 100) / 100,
    syntax_ok: a.check.ok,
    checked_region: a.check.region,
    ...(a.check.error ? { syntax_error: a.check.error } : {}),
  }));
}

/** No attempt passed the syntax gate: the model-free fallback's answer, else AIP_ERR_SYNTAX. */
async function syntaxGateFailed(
  result: InferResult,
  attempts: ReturnType<typeof attemptsReport>,
  fallback: Fallback | undefined,
): Promise<unknown> {
  const last = result.attempts.at(-1)?.check.error ?? "unknown";
  const retries = result.attempts.length - 1;
  const detail = `The completion failed the syntax check after ${result.attempts.length} attempts: ${last}`;
  if (fallback)
    return await fallback({ reason: "syntax_gate", retries }, detail, { retries, model_attempts: attempts });
  throw new AipError(
    "AIP_ERR_SYNTAX",
    `The completion failed the syntax check after ${result.attempts.length} attempts (${result.attempts.length - 1} retries): ${last}`,
    {
      extensions: { retries: result.attempts.length - 1, attempts },
    },
  );
}

/** Response: the chosen completion with the prompt, context and inference accounting. */
function completionPayload<S extends Sliced>(
  host: ModelEngine,
  lang: CompletionLanguage<S>,
  sliced: S,
  { header, symbols }: PromptText,
  { trimmed, useFim, window, maxTokens }: ReturnType<typeof fitToWindow>,
  result: InferResult,
  chosen: Attempt,
  attempts: ReturnType<typeof attemptsReport>,
  c: Constraints,
  stages: Stages,
) {
  const first = result.attempts[0]!.gen;
  const generated = result.attempts.reduce((n, a) => n + a.gen.tokens, 0);
  const fimTokens =
    useFim && host.fim.tokens
      ? {
          prefix: host.fim.tokens.prefix.text,
          suffix: host.fim.tokens.suffix.text,
          middle: host.fim.tokens.middle.text,
        }
      : null;
  return {
    ...modelCompletion(chosen.gen.text, sliced.cursor),
    syntax_ok: chosen.check.ok,
    ...(chosen.check.ok ? {} : { best_effort: true, syntax_error: chosen.check.error }),
    retries: result.attempts.length - 1,
    prompt: {
      format: useFim ? "fim" : "prefix",
      fim_tokens: fimTokens,
      tokens: first.promptTokens,
      window_tokens: window,
      max_tokens: maxTokens,
      stable_prefix: { chars: header.length + symbols.length, sha1: stableSha1(header, symbols) },
      ...((c.debug_prompt ?? false) ? { prefix_text: trimmed.prefix, suffix_text: trimmed.suffix } : {}),
    },
    context: trimmed.accounting,
    inference: {
      kv_reused_tokens: first.kvReused,
      evaluated_prompt_tokens: first.promptTokens - first.kvReused,
      generated_tokens: generated,
      tokens_per_s: result.inferenceMs > 0 ? Math.round((generated / result.inferenceMs) * 1000) : 0,
      attempts,
    },
    budgets_ms: STAGE_BUDGETS_MS,
    over_budget: stages.overruns,
    ...lang.partial(sliced),
  };
}
