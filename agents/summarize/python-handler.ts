/** The summarize action on a Python module or function (python.ts builds the parts). */
import { relative, sep } from "node:path";
import { AipError } from "../../protocol/contract/errors.js";
import type { AipRequest } from "../../protocol/contract/schemas.js";
import { offsetAt } from "../lib/code/position.js";
import { readRequestRaw } from "../lib/code/source.js";
import type { HandlerContext } from "../lib/runtime/types.js";
import { functionProse, moduleProse } from "./prose.js";
import { pythonApi, pythonLanguage, pythonOutline, pythonPartial, pythonSignature } from "./python.js";

export async function summarizePython(request: AipRequest, ctx: HandlerContext, scope: string): Promise<unknown> {
  const src = await readRequestRaw(request);
  const py = await pythonLanguage();
  const doc = py.parse(src.text, src.displayPath);
  ctx.timer.mark("parse");
  const head = {
    ...(src.displayPath !== undefined ? { file_path: src.displayPath } : {}),
    language: "python",
    ...pythonPartial(doc),
  };
  const rel = (p: string): string => (src.root ? relative(src.root, p).split(sep).join("/") : p);
  const api = pythonApi(py, doc, src.absPath, src.root, rel);
  const publicSet = new Set(api.exports.map((e) => e.name));
  if (scope === "function") {
    const cursor = request.context.cursor;
    if (!cursor)
      throw new AipError(
        "AIP_ERR_MISSING_FIELD",
        'Missing required field: context.cursor (scope "function" summarises the function at the cursor)',
        { extensions: { fields: ["context.cursor"] } },
      );
    const d = py.declarationAt(doc, offsetAt(doc.source, cursor), ["function", "method"]);
    if (!d)
      throw new AipError(
        "AIP_ERR_INVALID_FIELD",
        `context.cursor: no function or method at line ${cursor.line}, column ${cursor.column}`,
        { extensions: { errors: [{ path: "context.cursor", message: "not inside a function" }] } },
      );
    const sig = pythonSignature(d, d.container === "" && publicSet.has(d.name), doc.source);
    ctx.timer.mark("slice");
    return { ...head, scope, function: sig, summary: functionProse(sig) };
  }
  const outline = pythonOutline(doc, (n) => publicSet.has(n));
  outline.exports = api.exports;
  outline.unresolved_exports = api.unresolved;
  ctx.timer.mark("outline");
  return { ...head, scope, outline, summary: moduleProse(outline, src.displayPath), summary_source: "extractive" };
}
