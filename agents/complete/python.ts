/**
 * agent-complete on Python (docs/agents.md, "Python completion"): the seed's pipeline, each stage timed
 * and under its budget: slice the enclosing function from the language layer's tree; a symbol table of
 * the module (imports, functions, classes, constants) and the names in scope in the prompt; the token
 * budget (tiktoken or the model's tokenizer); the model call; a syntax gate on the completed region
 * (tree-sitter, no error node in it; at most 2 retries). When the model is unavailable, fails, or no
 * attempt passes the gate, complete-lite answers (`engine: "lite"`, `engine_reason` says why): never an
 * error for those.
 */
import { actionInput } from "../../protocol/contract/actions.js";
import { isAipError } from "../../protocol/contract/errors.js";
import type { AipRequest } from "../../protocol/contract/schemas.js";
import type { FunctionSlice } from "../lib/code/cursor.js";
import { python, type PythonDocument } from "../lib/code/languages/python/index.js";
import { reportDiagnostics } from "../lib/code/parse.js";
import { lineStarts, offsetAt, positionAt } from "../lib/code/position.js";
import { readRequestIn } from "../lib/code/source.js";
import { completionDocument, documentKey } from "../lib/completion/python/handler.js";
import type { HandlerContext } from "../lib/runtime/types.js";
import { codeContext } from "./context.js";
import type { CompleteDeps } from "./handler.js";
import { modelCompletion } from "./answer.js";
import { infer } from "./infer.js";
import { Stages, STAGE_BUDGETS_MS } from "./stages.js";
import { trimToBudget } from "./trim.js";
import type { CheckResult } from "./check.js";

/** The module's symbol table as prompt comment lines: imports, classes, functions, constants. */
export function pythonSymbolsBlock(doc: PythonDocument): string {
  const lines: string[] = [];
  for (const imp of doc.imports) {
    const names = imp.names.map((n) => (n.name === n.imported ? n.name : `${n.imported} as ${n.name}`)).join(", ");
    lines.push(imp.module ? `import ${names}` : `from ${imp.from} import ${imp.star ? "*" : names}`);
  }
  for (const d of doc.outline) {
    if (d.kind === "import") continue;
    if (d.kind === "class") {
      lines.push(d.signature);
      for (const m of d.children.slice(0, 20)) lines.push(`    ${m.signature}`);
    } else lines.push(d.signature);
  }
  if (lines.length === 0) return "";
  return `# CURRENT_SYMBOLS\n${lines.map((l) => `# ${l}\n`).join("")}# END_SYMBOLS\n`;
}

/**
 * The syntax gate: the completion spliced in at the cursor, the buffer parsed again, and no syntax error
 * in the completed region (from the line the cursor is on to the end of the completion's last line)
 * that the buffer did not already have there.
 */
export function checkPython(source: string, offset: number, text: string, before: PythonDocument): CheckResult {
  const spliced = source.slice(0, offset) + text + source.slice(offset);
  const regionStart = source.lastIndexOf("\n", offset - 1) + 1;
  const endNl = spliced.indexOf("\n", offset + text.length);
  const regionEnd = endNl < 0 ? spliced.length : endNl;
  let doc: PythonDocument;
  try {
    doc = python.parse(spliced) as PythonDocument;
  } catch (err) {
    return {
      ok: false,
      parsed: false,
      formatted: false,
      error: (err as Error).message,
      score: 0,
      region: "statement",
      checked_chars: 0,
    };
  }
  const had = new Set(before.diagnostics.filter((d) => d.start < regionStart).map((d) => d.start));
  const bad = doc.diagnostics.find((d) => d.start >= regionStart && d.start <= regionEnd && !had.has(d.start));
  return {
    ok: bad === undefined,
    parsed: true,
    formatted: false,
    ...(bad ? { error: bad.message } : {}),
    score: bad ? Math.max(0, bad.start - offset) : text.length + 1,
    region: "statement",
    checked_chars: regionEnd - regionStart,
  };
}

/** The complete action on a Python buffer with a model. */
export async function completePythonModel(
  deps: CompleteDeps,
  request: AipRequest,
  ctx: HandlerContext,
): Promise<unknown> {
  const stages = new Stages(ctx);
  const { host } = deps;
  const c = actionInput("complete", request).constraints;
  const lite = async (reason: string, extra: Record<string, unknown> = {}): Promise<unknown> => {
    if (!deps.lite) throw new Error(`no model-free engine to answer with (${reason})`);
    const out = (await deps.lite(request, ctx)) as Record<string, unknown>;
    return { ...out, engine: "lite", engine_reason: reason, ...extra };
  };
  if (!host.ready)
    return lite(
      host.state.status === "none" || host.state.status === "failed"
        ? `no model: ${host.state.reason}`
        : "the model is still loading",
      { model_state: host.state.status },
    );
  const maxTokens = c.max_tokens ?? 64;
  stages.end("accept", ctx.signal);

  // slice: the enclosing function from the tree
  const loc = await readRequestIn(request, ["python"]);
  const source = loc.text;
  const starts = lineStarts(source);
  const cursor = request.context.cursor ?? positionAt(source.length, starts);
  const offset = offsetAt(source, cursor, starts);
  // The editor's document from its last state; a buffer the parser gives up on is still sliced (by a
  // token scan), never an error.
  const { doc } = await completionDocument(
    source,
    loc.displayPath ?? request.context.file_path,
    documentKey(request, loc.absPath),
  );
  const fn = python.declarationAt(doc, offset, ["function", "method"]);
  const code = codeContext(source, offset, fn ? ({ range: [fn.start, fn.end] } as FunctionSlice) : undefined, starts);
  stages.end("slice", ctx.signal);

  // symbols: the module's table and the names in scope
  const header = `# Language: python\n${loc.displayPath !== undefined ? `# File: ${loc.displayPath}\n` : ""}`;
  const symbols = pythonSymbolsBlock(doc);
  const local = python
    .namesInScope(doc, offset)
    .filter((n) => n.kind === "local" || n.kind === "parameter")
    .map((n) => n.name);
  const locals = local.length ? `# LOCAL_SYMBOLS: ${local.join(", ").slice(0, 400)}\n` : "";
  stages.end("prompt", ctx.signal);

  // token budget
  const counter = deps.counter();
  const useFim = host.fim.format === "fim";
  const window = host.contextSize;
  const trimmed = trimToBudget({ host, counter, useFim, window, maxTokens, code, header, symbols, locals });
  stages.end("budget", ctx.signal);

  // model ⇄ syntax gate
  let result;
  try {
    result = await infer({
      host,
      prompt: trimmed.tokens,
      maxTokens,
      stop: c.stop ?? ["\n\n"],
      seed: c.seed ?? 0,
      limitMs: Math.min(c.inference_timeout_ms ?? STAGE_BUDGETS_MS.inference, Math.max(1, ctx.remainingMs() - 25)),
      signal: ctx.signal,
      source,
      offset,
      dialect: { language: "typescript", jsx: false },
      base: undefined,
      check: (text: string) => checkPython(source, offset, text, doc),
      ...(deps.generate ? { generate: deps.generate } : {}),
    });
  } catch (err) {
    ctx.signal.throwIfAborted();
    return lite(`the model failed: ${isAipError(err) ? err.code : "error"}: ${(err as Error).message}`);
  }
  ctx.timer.mark("inference");
  ctx.timer.set("inference", result.inferenceMs);
  ctx.timer.set("syntax", result.syntaxMs);
  stages.total("inference", result.inferenceMs);
  stages.total("syntax", result.syntaxMs);
  const attempts = result.attempts.map((a) => ({
    seed: a.seed,
    temperature: a.temperature,
    generated_tokens: a.gen.tokens,
    inference_ms: Math.round(a.gen.ms * 100) / 100,
    syntax_ok: a.check.ok,
    ...(a.check.error ? { syntax_error: a.check.error } : {}),
  }));
  const retries = result.attempts.length - 1;
  const chosen = result.ok ?? (c.best_effort ? result.best : undefined);
  if (!chosen)
    return lite(`the completion failed the syntax gate after ${retries} retries`, {
      retries,
      model_attempts: attempts,
    });
  const diagnostics = reportDiagnostics(doc, starts);
  stages.end("response", ctx.signal);
  return {
    ...modelCompletion(chosen.gen.text, cursor),
    syntax_ok: chosen.check.ok,
    retries,
    prompt: {
      format: useFim ? "fim" : "prefix",
      tokens: result.attempts[0]!.gen.promptTokens,
      window_tokens: window,
      max_tokens: maxTokens,
      ...(c.debug_prompt ? { prefix_text: trimmed.prefix, suffix_text: trimmed.suffix } : {}),
    },
    context: trimmed.accounting,
    inference: { attempts },
    budgets_ms: STAGE_BUDGETS_MS,
    over_budget: stages.overruns,
    ...(diagnostics.length > 0 ? { partial: true, diagnostics } : {}),
  };
}
