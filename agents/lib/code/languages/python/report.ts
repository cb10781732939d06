/** What agents report about Python code in the shapes the TypeScript paths use (protocol/contract/actions.ts). */
import { MAX_REPORTED_DIAGNOSTICS, type ReportedDiagnostic } from "../../parse.js";
import { lineStarts, positionAt } from "../../position.js";
import type { SignatureInfo } from "../../signature.js";
import { loadLanguage } from "../registry.js";
import type { CodeLanguage, Declaration, ParamInfo } from "../types.js";
import type { PythonDocument } from "./document.js";

export async function pythonLanguage(): Promise<CodeLanguage<PythonDocument>> {
  return (await loadLanguage("python")) as unknown as CodeLanguage<PythonDocument>;
}

/** Diagnostics as responses carry them, and `partial: true` when there are any. */
export function pythonPartial(doc: PythonDocument): { partial?: true; diagnostics?: ReportedDiagnostic[] } {
  if (doc.diagnostics.length === 0) return {};
  const starts = lineStarts(doc.source);
  return {
    partial: true,
    diagnostics: doc.diagnostics
      .slice(0, MAX_REPORTED_DIAGNOSTICS)
      .map((d) => ({ ...positionAt(d.start, starts), message: d.message })),
  };
}

function param(p: ParamInfo): SignatureInfo["params"][number] {
  return {
    name: p.kind === "vararg" ? `*${p.name}` : p.kind === "kwarg" ? `**${p.name}` : p.name,
    ...(p.type !== undefined ? { type: p.type } : {}),
    ...(p.default !== undefined ? { default: p.default } : {}),
    optional: p.default !== undefined || p.kind === "vararg" || p.kind === "kwarg",
    rest: p.kind === "vararg" || p.kind === "kwarg",
  };
}

/** A function or method as the TS agents report signatures (protocol/contract/actions.ts SignatureSchema). */
export function pythonSignature(
  d: Declaration,
  exported: boolean,
  source?: string,
): SignatureInfo & { summary: string } {
  const kind =
    d.kind !== "method"
      ? "function"
      : d.name === "__init__"
        ? "constructor"
        : d.decorators.includes("property") || d.decorators.some((x) => x.endsWith(".getter"))
          ? "getter"
          : d.decorators.some((x) => x.endsWith(".setter"))
            ? "setter"
            : "method";
  return {
    name: d.name,
    kind: kind as SignatureInfo["kind"],
    ...(d.kind === "method" ? { class: d.container } : {}),
    exported,
    async: d.async === true,
    generator: source !== undefined && /\byield\b/.test(source.slice(d.start, d.end)),
    params: (d.params ?? []).map(param),
    ...(d.returns !== undefined ? { returns: d.returns } : {}),
    text: d.signature,
    doc: d.summary,
    summary: d.summary,
    decorators: d.decorators,
    line_start: d.line_start,
    line_end: d.line_end,
  };
}
