/** A short extractive summary built from an outline: deterministic, no model. */
import type { SignatureInfo } from "../lib/code/signature.js";
import type { Outline } from "./outline.js";

function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const m = /^(.*?[.!?])(\s|$)/.exec(flat);
  return m ? m[1]! : flat;
}

function list(names: string[], max = 6): string {
  if (names.length <= max) return names.join(", ");
  return `${names.slice(0, max).join(", ")} and ${names.length - max} more`;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Two to four sentences: what the module is for, what it exports, its main parts. */
export function moduleProse(o: Outline, path?: string): string {
  const parts: string[] = [];
  const subject = path ?? "This module";
  if (o.module_doc) parts.push(`${subject}: ${firstSentence(o.module_doc)}`);
  else parts.push(`${subject} has ${plural(o.lines, "line")}.`);
  const values = o.exports.filter((e) => !e.type_only).map((e) => e.name);
  const types = o.exports.filter((e) => e.type_only).map((e) => e.name);
  if (values.length + types.length === 0) parts.push("It exports nothing.");
  else
    parts.push(
      `It exports ${[values.length ? list(values) : "", types.length ? `the types ${list(types)}` : ""].filter(Boolean).join(" and ")}.`,
    );
  const unresolved = [...new Set((o.unresolved_exports ?? []).map((u) => u.from))];
  if (unresolved.length) parts.push(`It also re-exports from ${list(unresolved, 4)}, which could not be followed.`);
  const counts = [
    o.functions.length ? plural(o.functions.length, "function") : "",
    o.classes.length ? plural(o.classes.length, "class", "classes") : "",
    o.types.length ? plural(o.types.length, "type") : "",
    o.consts.length ? plural(o.consts.length, "constant") : "",
  ].filter(Boolean);
  if (counts.length)
    parts.push(
      `It defines ${counts.join(", ")}${o.imports.length ? ` and imports from ${list([...new Set(o.imports.map((i) => i.from))], 4)}` : ""}.`,
    );
  const documented = [...o.functions, ...o.classes]
    .filter((x) => x.doc)
    .map((x) => `${x.name}: ${x.doc.replace(/[.!?]$/, "")}`);
  if (documented.length) parts.push(`Main parts: ${documented.slice(0, 3).join("; ")}.`);
  return parts.join(" ");
}

/** One or two sentences about one function. */
export function functionProse(s: SignatureInfo): string {
  const what =
    `${s.async ? "async " : ""}${s.generator ? "generator " : ""}${s.kind === "method" || s.kind === "getter" || s.kind === "setter" || s.kind === "constructor" ? `${s.kind} ${s.class ?? ""}.${s.name}` : `function ${s.name}`}`.replace(
      /\s+/g,
      " ",
    );
  const params =
    s.params.length === 0
      ? "takes no parameters"
      : `takes ${s.params.map((p) => `${p.rest ? "..." : ""}${p.name}${p.type ? ` (${p.type})` : ""}${p.optional ? " (optional)" : ""}`).join(", ")}`;
  const ret = s.returns ? ` and returns ${s.returns}` : "";
  const lead = `The ${what} (lines ${s.line_start}-${s.line_end}) ${params}${ret}.`;
  return s.doc ? `${lead} ${s.doc}` : lead;
}
