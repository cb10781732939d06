/** The complete action with a model: accept → slice → prompt → budget → inference ⇄ syntax (≤ 2 retries) → response. */
import { createHash } from "node:crypto";
import { actionInput } from "../../protocol/contract/actions.js";
import { AipError } from "../../protocol/contract/errors.js";
import type { AipRequest } from "../../protocol/contract/schemas.js";
import { ParseCache } from "../lib/code/cache.js";
import { dialectOf } from "../lib/code/language.js";
import { guardHandler, partialFields } from "../lib/code/parse.js";
import { LineStartsCache, offsetAt, positionAt } from "../lib/code/position.js";
import { sliceAt } from "../lib/code/slice.js";
import { locateRequestFile } from "../lib/code/source.js";
import { moduleSymbols } from "../lib/code/symbols.js";
import { readContained } from "../lib/code/workspace.js";
import { detach } from "../lib/memo.js";
import type { TokenCounter } from "../lib/llm/budget.js";
import type { FallbackReason, ModelEngine } from "../lib/llm/engine.js";
import { EngineError } from "../lib/llm/remote/client.js";
import type { LatestWins } from "../../protocol/transport/latest.js";
import type { HandlerContext } from "../lib/runtime/types.js";
import { codeContext } from "./context.js";
import { modelCompletion } from "./answer.js";
import { infer, type Attempt, type InferInput } from "./infer.js";
import type { Prewarm } from "./prewarm.js";
import { headerText, localSymbolsLine, symbolsBlock, typedContextLine } from "./prompt.js";
import type { TypedEngine } from "../lib/completion/engine.js";
import { Stages, STAGE_BUDGETS_MS } from "./stages.js";
import { trimToBudget } from "./trim.js";
import { PLACEHOLDER, parseWithPlaceholder } from "../lib/code/placeholder.js";
import { isPythonRequest } from "../lib/completion/python/handler.js";
import { completePythonModel } from "./python.js";

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

/** The model-backed complete handler. */
export function createComplete(deps: CompleteDeps) {
  const cache = deps.cache ?? new ParseCache();
  const lines = new LineStartsCache();
  return guardHandler(async (request: AipRequest, ctx: HandlerContext): Promise<unknown> => {
    if (isPythonRequest(request)) return completePythonModel(deps, request, ctx);
    const stages = new Stages(ctx);
    const { host } = deps;
    const c = actionInput("complete", request).constraints;
    if (!host.ready) {
      if (c.fallback === "lite" && deps.lite) {
        const out = (await deps.lite(request, ctx)) as Record<string, unknown>;
        return { ...out, engine: "lite", model_state: host.state.status };
      }
      const reason =
        host.state.status === "none" || host.state.status === "failed"
          ? host.state.reason
          : "the model is still loading";
      throw new AipError("AIP_ERR_UNAVAILABLE", `agent-complete has no model: ${reason}`, {
        suggestion:
          'Route complete to complete-lite (the orchestrator does this for a degraded agent), send constraints.fallback "lite", or set AIP_MODEL to a .gguf file',
        extensions: { model_state: host.state.status },
      });
    }
    /** The model-free engine's answer in place of the model's, saying why (counted per reason in /healthz and /metrics). */
    const lite = deps.lite;
    const fallback = lite
      ? async (reason: FallbackReason, detail: string, extra: Record<string, unknown> = {}): Promise<unknown> => {
          host.fallbacks[reason]++;
          ctx.log.info({ event: "model_fallback", reason, detail }, "answered by the model-free engine");
          const out = (await lite(request, ctx)) as Record<string, unknown>;
          return { ...out, engine: "lite", reason, reason_detail: detail, ...extra };
        }
      : undefined;
    const down = host.unavailable();
    if (down !== undefined && fallback) return fallback("circuit_open", down);
    const maxTokens = c.max_tokens ?? 64;
    const inferenceLimit = c.inference_timeout_ms ?? STAGE_BUDGETS_MS.inference;
    const seed = c.seed ?? 0;
    const stop = c.stop ?? ["\n\n"];
    const allowTruncation = c.allow_truncation ?? true;
    const bestEffort = c.best_effort ?? false;
    const debugPrompt = c.debug_prompt ?? false;
    const ticket = deps.latest.claim(request, ctx.traceId);
    const signal = AbortSignal.any([ctx.signal, ticket.signal]);
    const { prewarm } = deps;
    prewarm?.enter();
    let buffer: { source: string; starts: readonly number[] } | undefined;
    try {
      stages.end("accept", signal);

      // slice
      const { source_code: code, cursor: cursorIn, language } = request.context;
      const loc = await locateRequestFile(request);
      let source: string;
      if (typeof code === "string") source = code;
      else if (loc.absPath !== undefined) source = (await readContained(loc.root!, loc.absPath)).text;
      else
        throw new AipError(
          "AIP_ERR_MISSING_FIELD",
          "Missing required field: context.source_code or context.file_path (with context.workspace_root)",
          { extensions: { fields: ["context.source_code", "context.file_path"] } },
        );
      const dialect = dialectOf(language, request.context.file_path);
      const starts = lines.get(source);
      buffer = { source, starts };
      const cursor = cursorIn ?? positionAt(source.length, starts);
      const offset = offsetAt(source, cursor, starts);
      // Lazy: statements after the edit owe their descendants a shift until something descends into them (incremental.ts).
      const { parsed, extra, file } = parseWithPlaceholder(
        cache,
        source,
        offset,
        dialect,
        loc.absPath ?? request.context.file_path,
        {
          lazy: true,
        },
      );
      const slice = sliceAt(parsed, cursor, { moduleScope: false, starts }); // module symbols come from moduleSymbols below
      const code0 = codeContext(source, offset, slice.fn, starts);
      stages.end("slice", signal);

      // symbols + prompt parts
      const header = headerText(dialect.language, loc.displayPath);
      const table = moduleSymbols(parsed.program, parsed.source);
      const modSymbols = table.some((s) => s.name === PLACEHOLDER)
        ? table.filter((s) => s.name !== PLACEHOLDER)
        : table;
      const symbols = symbolsBlock(modSymbols);
      let locals = localSymbolsLine(slice.symbols.filter((s) => s.name !== PLACEHOLDER));
      stages.end("prompt", signal);

      // the checker's context (a file of a workspace only): members of the receiver's type, signatures in scope
      if (deps.typed && loc.root !== undefined && loc.absPath !== undefined && /\.[cm]?[jt]sx?$/.test(loc.absPath)) {
        const wait = Math.min(c.typed_wait_ms ?? TYPED_CONTEXT_WAIT_MS, Math.max(0, ctx.remainingMs() / 4));
        const r = await deps.typed.complete(
          {
            root: loc.root,
            path: loc.absPath,
            text: source,
            offset,
            limit: TYPED_CONTEXT_ITEMS,
            details: TYPED_CONTEXT_SIGNATURES,
          },
          wait,
          ctx.log,
        );
        if ("answer" in r) locals += typedContextLine(r.answer);
        else ctx.log.debug({ event: "typed_context", reason: r.reason }, "prompt without the checker's context");
        ctx.timer.mark("typed");
      }

      // token budget
      const counter = deps.counter();
      const useFim = host.fim.format === "fim";
      const window = host.contextSize;
      const trimmed = trimToBudget({ host, counter, useFim, window, maxTokens, code: code0, header, symbols, locals });
      if (trimmed.truncated) {
        const detail = `Context trimmed to fit the model window: ${window} tokens minus max_tokens ${maxTokens} minus headroom; dropped ${trimmed.accounting.trimmed.prefix_lines} lines before and ${trimmed.accounting.trimmed.suffix_lines} lines after the kept code${trimmed.accounting.trimmed.symbols ? `, ${trimmed.accounting.trimmed.symbols} symbols` : ""}${trimmed.accounting.trimmed.kept_lines ? `, and ${trimmed.accounting.trimmed.kept_lines} lines of the enclosing function` : ""}`;
        if (!allowTruncation)
          throw new AipError("AIP_ERR_CONTEXT_TRUNCATED", detail, {
            extensions: { window, max_tokens: maxTokens, trimmed: trimmed.accounting.trimmed },
          });
        ctx.warn("AIP_ERR_CONTEXT_TRUNCATED", detail, { trimmed: trimmed.accounting.trimmed });
      }
      stages.end("budget", signal);

      // inference ⇄ syntax
      let result: Awaited<ReturnType<typeof infer>>;
      try {
        result = await infer({
          host,
          prompt: trimmed.tokens,
          maxTokens,
          stop,
          seed,
          limitMs: Math.min(inferenceLimit, Math.max(1, ctx.remainingMs() - RESPONSE_RESERVE_MS)),
          signal,
          source,
          offset,
          dialect,
          base: { file: parsed, extra },
          ...(deps.generate ? { generate: deps.generate } : {}),
          waiting: prewarm && ((w) => (w ? prewarm.leave() : prewarm.enter())),
        });
      } catch (err) {
        // An inference server that failed (not a deadline, not a cancellation): the editor still gets an answer.
        if (err instanceof EngineError && fallback) return await fallback("engine_error", err.message);
        throw err;
      }
      ctx.timer.mark("inference"); // advances the timer; the exact split is set below
      ctx.timer.set("inference", result.inferenceMs);
      ctx.timer.set("syntax", result.syntaxMs);
      stages.total("inference", result.inferenceMs);
      stages.total("syntax", result.syntaxMs);
      const chosen: Attempt | undefined = result.ok ?? (bestEffort ? result.best : undefined);
      const attemptsOut = result.attempts.map((a) => ({
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
      if (!chosen) {
        const detail = `The completion failed the syntax check after ${result.attempts.length} attempts: ${result.attempts.at(-1)?.check.error ?? "unknown"}`;
        if (fallback) return await fallback("syntax_gate", detail, { model_attempts: attemptsOut });
        throw new AipError(
          "AIP_ERR_SYNTAX",
          `The completion failed the syntax check after ${result.attempts.length} attempts (${result.attempts.length - 1} retries): ${result.attempts.at(-1)?.check.error ?? "unknown"}`,
          {
            extensions: { retries: result.attempts.length - 1, attempts: attemptsOut },
          },
        );
      }
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
      const payload = {
        ...modelCompletion(chosen.gen.text, cursor),
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
          ...(debugPrompt ? { prefix_text: trimmed.prefix, suffix_text: trimmed.suffix } : {}),
        },
        context: trimmed.accounting,
        inference: {
          kv_reused_tokens: first.kvReused,
          evaluated_prompt_tokens: first.promptTokens - first.kvReused,
          generated_tokens: generated,
          tokens_per_s: result.inferenceMs > 0 ? Math.round((generated / result.inferenceMs) * 1000) : 0,
          attempts: attemptsOut,
        },
        budgets_ms: STAGE_BUDGETS_MS,
        over_budget: stages.overruns,
        ...partialFields(file, starts),
      };
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
  });
}
