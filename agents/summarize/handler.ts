/** The summarize action: outline + extractive summary of a module, or of the function at the cursor. */
import { actionInput } from "../../protocol/contract/actions.js";
import { AipError } from "../../protocol/contract/errors.js";
import type { AipRequest } from "../../protocol/contract/schemas.js";
import { ParseCache } from "../lib/code/cache.js";
import { guardHandler, partialFields } from "../lib/code/parse.js";
import { signatureOf } from "../lib/code/signature.js";
import { functionAtOffset } from "../lib/code/cursor.js";
import { offsetAt } from "../lib/code/position.js";
import { requestLanguage } from "../lib/code/languages/registry.js";
import { loadRequestSource } from "../lib/code/source.js";
import { TokenCounter } from "../lib/llm/budget.js";
import type { ModelEngine } from "../lib/llm/engine.js";
import type { HandlerContext } from "../lib/runtime/types.js";
import { modelProse, SUMMARY_INFERENCE_MS } from "./model-prose.js";
import { moduleExports } from "../lib/code/exports.js";
import { outlineOf } from "./outline.js";
import { functionProse, moduleProse } from "./prose.js";
import { summarizePython } from "./python-handler.js";

/** Kept back from the deadline for building the response. */
const RESPONSE_RESERVE_MS = 25;

/** The summarize handler over a parse cache (one per process); with a loaded model the module summary is model prose. */
export function createSummarize(cache = new ParseCache(), model?: { host: ModelEngine; counter: () => TokenCounter }) {
  return guardHandler(async (request: AipRequest, ctx: HandlerContext): Promise<unknown> => {
    const { context, constraints } = actionInput("summarize", request);
    const scope = constraints.scope ?? context.scope ?? "module";
    if (requestLanguage(request.context.language, request.context.file_path) === "python")
      return summarizePython(request, ctx, scope);
    const src = await loadRequestSource(request, cache);
    ctx.timer.mark("parse");
    const { parsed } = src;
    const head = {
      ...(src.displayPath !== undefined ? { file_path: src.displayPath } : {}),
      language: parsed.dialect.language,
      ...partialFields(parsed),
    };
    if (scope === "function") {
      const cursor = request.context.cursor;
      if (!cursor)
        throw new AipError(
          "AIP_ERR_MISSING_FIELD",
          'Missing required field: context.cursor (scope "function" summarises the function at the cursor)',
          { extensions: { fields: ["context.cursor"] } },
        );
      // Anywhere on the declaration: its doc comment, `export`, name, parameters or body (see functionAtOffset).
      const fn = functionAtOffset(parsed.program, parsed.source, offsetAt(parsed.source, cursor));
      if (!fn) {
        throw new AipError(
          "AIP_ERR_INVALID_FIELD",
          `context.cursor: no function or method at line ${cursor.line}, column ${cursor.column}`,
          {
            extensions: { errors: [{ path: "context.cursor", message: "not inside a function" }] },
          },
        );
      }
      const sig = signatureOf(fn, parsed.source);
      ctx.timer.mark("slice");
      return { ...head, scope, function: sig, summary: functionProse(sig) };
    }
    const outline = outlineOf(parsed);
    // The real export list: re-exports followed into the workspace, overloads merged (exports.ts).
    const resolved = await moduleExports(parsed, src.absPath, src.root, cache);
    outline.exports = resolved.exports;
    outline.unresolved_exports = resolved.unresolved;
    ctx.timer.mark("outline");
    const extractive = moduleProse(outline, src.displayPath);
    if (model?.host.ready) {
      const maxTokens = constraints.max_tokens ?? 96;
      const limitIn = constraints.inference_timeout_ms ?? SUMMARY_INFERENCE_MS;
      const limitMs = Math.min(limitIn, Math.max(1, ctx.remainingMs() - RESPONSE_RESERVE_MS));
      const prose = await modelProse(
        model.host,
        model.counter(),
        outline,
        extractive,
        src.displayPath,
        maxTokens,
        limitMs,
        ctx,
      );
      ctx.timer.mark("inference");
      if (prose)
        return {
          ...head,
          scope,
          outline,
          summary: prose.summary,
          summary_source: "model",
          extractive_summary: extractive,
          model: prose.accounting,
        };
    }
    return { ...head, scope, outline, summary: extractive, summary_source: "extractive" };
  });
}
