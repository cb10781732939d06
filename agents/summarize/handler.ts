/** The summarize action: outline + extractive summary of a module, or of the function at the cursor. */
import { AipError } from "../../protocol/errors.js";
import type { AipRequest } from "../../protocol/schemas.js";
import { ParseCache } from "../code/cache.js";
import { optionalEnum } from "../code/request.js";
import { signatureOf } from "../code/signature.js";
import { sliceAt } from "../code/slice.js";
import { loadRequestSource } from "../code/source.js";
import type { HandlerContext } from "../runtime/types.js";
import { outlineOf } from "./outline.js";
import { functionProse, moduleProse } from "./prose.js";

const SCOPES = ["module", "function"] as const;

/** The summarize handler over a parse cache (one per process). */
export function createSummarize(cache = new ParseCache()) {
  return async (request: AipRequest, ctx: HandlerContext): Promise<unknown> => {
    const scope = optionalEnum(request.constraints, "scope", "constraints.scope", SCOPES) ?? optionalEnum(request.context, "scope", "context.scope", SCOPES) ?? "module";
    const src = await loadRequestSource(request, cache);
    ctx.timer.mark("parse");
    const { parsed } = src;
    const head = { ...(src.displayPath !== undefined ? { file_path: src.displayPath } : {}), language: parsed.dialect.language };
    if (scope === "function") {
      const cursor = request.context.cursor;
      if (!cursor) throw new AipError("AIP_ERR_MISSING_FIELD", "Missing required field: context.cursor (scope \"function\" summarises the function at the cursor)", { extensions: { fields: ["context.cursor"] } });
      const slice = sliceAt(parsed, cursor);
      if (!slice.fn) {
        throw new AipError("AIP_ERR_INVALID_FIELD", `context.cursor: no function or method at line ${cursor.line}, column ${cursor.column}`, {
          extensions: { errors: [{ path: "context.cursor", message: "not inside a function" }] },
        });
      }
      const sig = signatureOf(slice.fn, parsed.source);
      ctx.timer.mark("slice");
      return { ...head, scope, function: sig, summary: functionProse(sig) };
    }
    const outline = outlineOf(parsed);
    ctx.timer.mark("outline");
    return { ...head, scope, outline, summary: moduleProse(outline, src.displayPath) };
  };
}
