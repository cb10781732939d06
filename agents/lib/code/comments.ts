/** Doc comments: the JSDoc block right before a declaration, and its first sentence. */
import type { Comment, Node, Program } from "./parse.js";

/** The `/** … *\/` comment that ends right before `start` with only whitespace between. */
export function docCommentBefore(program: Program, source: string, start: number): Comment | undefined {
  const comments = program.comments ?? [];
  let lo = 0;
  let hi = comments.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (comments[mid]!.range[1] <= start) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  if (found === -1) return undefined;
  const c = comments[found]!;
  if (c.type !== "Block" || !c.value.startsWith("*")) return undefined;
  if (source.slice(c.range[1], start).trim() !== "") return undefined;
  return c;
}

/** The text of a doc comment without the `*` gutters and tags. */
export function docText(comment: Comment | undefined): string {
  if (!comment) return "";
  const lines = comment.value
    .split("\n")
    .map((l) => l.replace(/^\s*\*+ ?/, "").trimEnd())
    .filter((l, i, all) => !(l === "" && (i === 0 || i === all.length - 1)));
  const body: string[] = [];
  for (const l of lines) {
    if (l.trimStart().startsWith("@")) break;
    body.push(l);
  }
  return body.join("\n").trim();
}

/** The first sentence of a doc comment (up to the first ". " or blank line). */
export function docSummary(comment: Comment | undefined): string {
  const text = docText(comment)
    .split(/\n\s*\n/)[0]!
    .replace(/\s+/g, " ")
    .trim();
  const m = /^(.*?[.!?])(\s|$)/.exec(text);
  return m ? m[1]! : text;
}

/** The module doc comment: a leading `/** … *\/` not attached to the first statement. */
export function moduleDocComment(program: Program, source: string): Comment | undefined {
  const first = (program.comments ?? [])[0];
  if (!first || first.type !== "Block" || !first.value.startsWith("*")) return undefined;
  if (
    source
      .slice(0, first.range[0])
      .replace(/^#!.*\n/, "")
      .trim() !== ""
  )
    return undefined;
  const firstStmt: Node | undefined = program.body[0];
  if (!firstStmt) return first;
  // Attached to the first statement (only whitespace between, and no blank line) → that statement's doc.
  const between = source.slice(first.range[1], firstStmt.range[0]);
  const attached = between.trim() === "" && !/\n\s*\n/.test(between) && firstStmt.type !== "ImportDeclaration";
  return attached ? undefined : first;
}
