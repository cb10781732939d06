/**
 * Splitting files into search documents: one per definition (function, class, method, type, const,
 * documented member, Markdown heading) with its doc comment, plus windows for the rest. Regex-based on purpose: a full
 * parse costs tens of milliseconds a file, which a 5,000-file workspace cannot afford at index time.
 */

export interface Chunk {
  /** 1-based, inclusive. */
  line_start: number;
  line_end: number;
  /** The name defined here, if this chunk is a definition. */
  symbol?: string;
  kind: "module" | "function" | "class" | "method" | "property" | "type" | "const" | "heading" | "text";
  text: string;
  /**
   * A definition's head: its description (the prose of its doc comment, before any block tag) and its
   * declaration lines (name, parameters, types), without the body.
   */
  head?: string;
  /**
   * For a top-level definition of a file that exports something: whether it is exported (`export`
   * before it, or named in an `export { … }` / `export default` of the file). Absent elsewhere.
   */
  exported?: boolean;
  /** A top-level definition that is its file's default export (`export default function f`, `export default f`). */
  isDefault?: true;
}

/** Declaration lines a head takes after the first one, for a signature that wraps. */
const MAX_SIGNATURE_LINES = 4;

/** Lines a wrapped method signature may take (one parameter a line) before its `) {`. */
const MAX_WRAPPED_LINES = 12;

const MAX_CHUNK_LINES = 60;

const TOP_DEF =
  /^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?(function\*?|class|interface|type|enum|namespace|const|let|var)\s+([A-Za-z_$][\w$]*)/;
/** An indented name with its modifiers, where a method's declaration starts (`methodName`). */
const METHOD_NAME =
  /^\s+(?:(?:public|private|protected|static|readonly|async|override|abstract|get|set)\s+)*\*?\s*(#?[A-Za-z_$][\w$]*)\s*/;

/** A `;` outside braces: a statement's end, not a member of an object type (`{ a: A; b: B }`). One pass. */
function semicolonOutsideBraces(line: string): boolean {
  let braces = 0;
  for (let p = 0; p < line.length; p++) {
    const c = line[p];
    if (c === "{") braces++;
    else if (c === "}") braces--;
    else if (c === ";" && braces <= 0) return true;
  }
  return false;
}

/**
 * The name of the method whose declaration line `line` may be (docs/agents.md "search"): an indented name,
 * its type parameters (`<T extends (a: A) => B>`: the `>` of an arrow does not close them), then `(`, and
 * no `;` after it outside braces (a call ends with one; a parameter's object type `{ a: A; b: B }` holds
 * some), none at all on a line with a quote (braces in a string: `expect(x).toBe("f(): void {");`). One
 * pass over the line.
 */
function methodName(line: string): string | undefined {
  const m = METHOD_NAME.exec(line);
  if (!m) return undefined;
  let p = m[0].length;
  if (line[p] === "<") {
    let depth = 0;
    for (; p < line.length; p++) {
      const c = line[p];
      if (c === "<") depth++;
      else if (c === ">" && line[p - 1] !== "=" && --depth === 0) break;
    }
    p++;
    while (line[p] === " " || line[p] === "\t") p++;
  }
  if (line[p] !== "(") return undefined;
  const rest = line.slice(p);
  if (semicolonOutsideBraces(rest)) return undefined;
  return rest.includes(";") && /["'`]/.test(rest) ? undefined : m[1];
}
/**
 * A member of a class, interface, object type or object literal: `name:`, `name?:`, `name(`, `name<`,
 * `name =` (a class field with an initializer); tried only under a doc comment.
 */
const MEMBER_DEF =
  /^\s+(?:(?:public|private|protected|static|readonly|declare|override|abstract|get|set|async)\s+)*(#?[A-Za-z_$][\w$]*)\??\s*(?:[:(<]|=(?![=>]))/;
const NOT_METHODS = new Set([
  "if",
  "for",
  "while",
  "switch",
  "catch",
  "return",
  "function",
  "await",
  "typeof",
  "new",
  "super",
  "do",
  "else",
  "throw",
  "yield",
  "constructor",
]);

const KIND: Record<string, Chunk["kind"]> = {
  function: "function",
  "function*": "function",
  class: "class",
  interface: "type",
  type: "type",
  enum: "type",
  namespace: "type",
  const: "const",
  let: "const",
  var: "const",
};

interface Start {
  line: number;
  /** The declaration's own line (after its doc comment and decorators). */
  def: number;
  symbol?: string;
  kind: Chunk["kind"];
  /** A top-level definition with the `export` keyword. */
  exportKeyword?: boolean;
  /** A top-level definition declared `export default`. */
  defaultKeyword?: boolean;
}

/**
 * Per line, the last line at or before it that contains `marker` (-1 when none): one pass, so that finding
 * the opening of the doc comment above each definition costs constant time however long the comment is.
 */
function lastLineWith(lines: string[], marker: string): Int32Array {
  const out = new Int32Array(lines.length);
  let last = -1;
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.includes(marker)) last = i;
    out[i] = last;
  }
  return out;
}

/**
 * Where the comment documenting the definition on line `i` starts (`i` when it has none): a run of `//`
 * lines directly above, and a `/** … *\/` block ending just above them or the definition (however long);
 * `jsdoc` when there is such a block.
 */
function docStart(i: number, lines: string[], marks: CommentMarks): { start: number; jsdoc: boolean } {
  const s = marks.slashRun[i]!;
  if (s > 0 && lines[s - 1]!.trimEnd().endsWith("*/")) {
    const j = marks.opens[s - 1]!;
    // The block must be one doc comment: no `*/` between its `/**` and its last line.
    if (j >= 0 && (j === s - 1 || (s >= 2 && marks.closes[s - 2]! < j))) return { start: j, jsdoc: true };
  }
  return { start: s, jsdoc: false };
}

/**
 * A method whose type parameters wrap (formatters put one a line when they are long): `callHookWith<`
 * alone on its line, its parameters after the line that closes the list (`>(`) (docs/agents.md "search").
 */
const WRAPPED_GENERIC_METHOD =
  /^\s+(?:(?:public|private|protected|static|readonly|async|override|abstract|get|set)\s+)*(#?[A-Za-z_$][\w$]*)\s*<\s*$/;
/** The line that closes a wrapped type parameter list and opens the parameters: `>(`, `>(a: T): R {`. */
const GENERIC_CLOSE = /^\s*>\s*\(/;
/** Where comments are, computed once per file so that each definition's doc comment is found in constant time. */
interface CommentMarks {
  /** Per line, the last line at or before it holding `/**`. */
  opens: Int32Array;
  /** Per line, the last line at or before it holding `*\/`. */
  closes: Int32Array;
  /** Per line `i`, the first line of the run of `//` lines that ends just above `i` (`i` when there is none). */
  slashRun: Int32Array;
}

function commentMarks(lines: string[]): CommentMarks {
  const slashRun = new Int32Array(lines.length + 1);
  for (let i = 1; i <= lines.length; i++)
    slashRun[i] = lines[i - 1]!.trimStart().startsWith("//") ? slashRun[i - 1]! : i;
  return { opens: lastLineWith(lines, "/**"), closes: lastLineWith(lines, "*/"), slashRun };
}

/** A method's parameters closing on its line: `name(a, b) {`, `name(): T {`, or a signature ending the line (`name(): T`). */
const SIGNATURE_CLOSES = /\)\s*(:[^=]*)?\{?\s*$/;
/** A return type that is a function type, then the body: `name(fn: F): () => void {` (not an arrow callback's `=> {`). */
const FUNCTION_TYPE_RETURN = /\)\s*:.*\{\s*$/;
const ARROW_BODY = /=>\s*\{\s*$/;
/** The closing line of a wrapped method signature: `): () => void {`, `) {`. */
const WRAPPED_CLOSE = /^\s*\)\s*(:.*)?\{\s*$/;

/**
 * Whether line `i`, which starts like a method (`name(` / `name<T>(` indented), is a method's
 * declaration: its parameters close on the line (a return type may follow, a function type too), or the
 * line ends with `(` and the signature wraps (as formatters wrap long ones), closing with `) … {` within
 * `MAX_WRAPPED_LINES` lines. A call (`foo(`, `);`) or a callback (`it("x", () => {`) is not one.
 */
function methodSignature(lines: string[], i: number): boolean {
  const line = lines[i]!;
  if (SIGNATURE_CLOSES.test(line)) return true;
  if (FUNCTION_TYPE_RETURN.test(line)) return !ARROW_BODY.test(line);
  if (!line.trimEnd().endsWith("(")) return false;
  for (let j = i + 1; j < lines.length && j <= i + MAX_WRAPPED_LINES; j++) {
    const l = lines[j]!;
    if (WRAPPED_CLOSE.test(l)) return !ARROW_BODY.test(l);
    if (l.trimStart().startsWith(")") || semicolonOutsideBraces(l) || l.trimEnd().endsWith("{")) return false;
  }
  return false;
}

/**
 * Whether line `i` opens a method whose type parameter list wraps (`WRAPPED_GENERIC_METHOD`): the list
 * closes with `>(` within `MAX_WRAPPED_LINES` lines and a method's signature follows from there.
 */
function wrappedGenericMethod(lines: string[], i: number): boolean {
  for (let j = i + 1; j < lines.length && j <= i + MAX_WRAPPED_LINES; j++) {
    const l = lines[j]!;
    if (GENERIC_CLOSE.test(l)) return methodSignature(lines, j);
    if (l.includes(";") || l.trimEnd().endsWith("{")) return false;
  }
  return false;
}

/** Where each definition starts (0-based lines), with its doc comment pulled in. */
function definitionStarts(lines: string[], markdown: boolean): Start[] {
  const starts: Start[] = [];
  let inFence = false;
  const marks = commentMarks(markdown ? [] : lines);
  let inComment = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (markdown) {
      if (line.startsWith("```")) inFence = !inFence;
      const h = !inFence ? /^#{1,6}\s+(.*)$/.exec(line) : null;
      if (h) starts.push({ line: i, def: i, symbol: h[1]!.trim(), kind: "heading" });
      continue;
    }
    // Inside a block comment that opened on a line of its own (a doc comment's examples): no definitions.
    if (inComment) {
      if (line.includes("*/")) inComment = false;
      continue;
    }
    const trimmed = line.trimStart();
    if (trimmed.startsWith("/*") && !trimmed.includes("*/", 2)) {
      inComment = true;
      continue;
    }
    const top = TOP_DEF.exec(line);
    let def: Start | undefined;
    let doc: { start: number; jsdoc: boolean } | undefined;
    if (top)
      def = {
        line: i,
        def: i,
        symbol: top[2]!,
        kind: KIND[top[1]!] ?? "const",
        exportKeyword: line.startsWith("export"),
        ...(line.startsWith("export default ") ? { defaultKeyword: true } : {}),
      };
    else {
      const m = methodName(line);
      const g = m !== undefined ? null : WRAPPED_GENERIC_METHOD.exec(line);
      if (m !== undefined && !NOT_METHODS.has(m) && methodSignature(lines, i))
        def = { line: i, def: i, symbol: m, kind: "method" };
      else if (g && !NOT_METHODS.has(g[1]!) && wrappedGenericMethod(lines, i))
        def = { line: i, def: i, symbol: g[1]!, kind: "method" };
      else if (i > 0 && (doc = docStart(i, lines, marks)).jsdoc) {
        // A member under a doc comment (an option of an options type, a field, a method signature, an
        // object literal's member): its own chunk, so its doc comment is its description rather than
        // words deep inside its container's text.
        const p = MEMBER_DEF.exec(line);
        if (p && !NOT_METHODS.has(p[1]!))
          def = {
            line: i,
            def: i,
            symbol: p[1]!,
            kind: /[(<]/.test(line[p[0].length - 1]!) ? "method" : "property",
          };
      }
    }
    if (!def) continue;
    // Decorators, then the doc comment above them.
    let d = i;
    while (d > 0 && /^\s*@[\w.]+/.test(lines[d - 1]!)) d--;
    const s = (d === i && doc ? doc : docStart(d, lines, marks)).start;
    starts.push({ ...def, line: s });
  }
  return starts;
}

/**
 * A definition's description: the prose of the comment above it (`from` up to its declaration line
 * `def`), comment markers stripped, up to the first block tag (`@param`, `@example`, …), fenced code left out.
 */
export function descriptionOf(lines: string[], from: number, def: number): string {
  const out: string[] = [];
  let fence = false;
  for (let k = from; k < def; k++) {
    let l = lines[k]!.trim();
    if (l.startsWith("@")) break; // a decorator or a block tag: the description is over
    if (l.startsWith("/**")) l = l.slice(3);
    else if (l.startsWith("//")) l = l.slice(2);
    else if (l.startsWith("*") && !l.startsWith("*/")) l = l.slice(1);
    if (l.endsWith("*/")) l = l.slice(0, -2);
    l = l.trim();
    if (l.startsWith("@")) break;
    if (l.startsWith("```")) {
      fence = !fence;
      continue;
    }
    if (fence) continue;
    if (l === "") {
      if (out.length > 0) break; // the first paragraph is the summary
      continue;
    }
    out.push(l);
  }
  return firstSentence(out.join(" "));
}

/** Text up to the first `.`, `!` or `?` followed by white space or the end (all of it when there is none). */
function firstSentence(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if ((c === "." || c === "!" || c === "?") && (i + 1 === text.length || text[i + 1] === " "))
      return text.slice(0, i + 1);
  }
  return text;
}

/**
 * Names a file exports without the keyword on their declaration: the identifiers of its `export { … }`
 * clauses (on one line or several) and of `export default name`. One pass; a clause's `as` and `from`
 * parts are listed too, which is harmless (they name no local definition or the same one).
 */
function exportClauseNames(lines: string[]): { names: Set<string>; defaultName?: string } {
  const names = new Set<string>();
  let defaultName: string | undefined;
  let inClause = false;
  for (const line of lines) {
    let text: string;
    if (inClause) text = line;
    else if (line.startsWith("export {") || line.startsWith("export type {") || line.startsWith("export{")) {
      text = line.slice(line.indexOf("{") + 1);
      inClause = true;
    } else if (line.startsWith("export default ")) {
      const m = /^export default ([A-Za-z_$][\w$]*)[\s;]*$/.exec(line);
      if (m) {
        names.add(m[1]!);
        defaultName = m[1]!;
      }
      continue;
    } else continue;
    const close = text.indexOf("}");
    if (close !== -1) {
      text = text.slice(0, close);
      inClause = false;
    }
    for (const token of text.split(/[\s,]+/)) if (/^[A-Za-z_$][\w$]*$/.test(token)) names.add(token);
  }
  return defaultName === undefined ? { names } : { names, defaultName };
}

/** The chunks of one file. A leading doc comment makes the header a "module" definition named after the file. */
export function chunkFile(text: string, markdown: boolean, moduleName?: string): Chunk[] {
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  const starts = definitionStarts(lines, markdown);
  const out: Chunk[] = [];
  /** The description (doc comment prose) and the declaration lines from `def`: up to the line that opens the body or ends the declaration. */
  const headOf = (from: number, def: number, to: number): string => {
    let end = def;
    while (end < to && end - def < MAX_SIGNATURE_LINES && !/[{;]|=>/.test(lines[end]!)) end++;
    const description = descriptionOf(lines, from, def);
    const declaration = lines.slice(def, end + 1).join("\n");
    return description === "" ? declaration : `${description}\n${declaration}`;
  };
  const clauses = markdown ? { names: new Set<string>(), defaultName: undefined } : exportClauseNames(lines);
  const clauseNames = clauses.names;
  const isDefaultOf = (st: Start): boolean =>
    st.defaultKeyword === true || (st.exportKeyword !== undefined && st.symbol === clauses.defaultName);
  const exportsSomething = clauseNames.size > 0 || starts.some((st) => st.exportKeyword === true);
  const exportedOf = (st: Start): boolean | undefined =>
    !exportsSomething || st.exportKeyword === undefined
      ? undefined
      : st.exportKeyword || (st.symbol !== undefined && clauseNames.has(st.symbol));
  const push = (
    from: number,
    to: number,
    symbol: string | undefined,
    kind: Chunk["kind"],
    def?: number,
    exported?: boolean,
    overloads: number[] = [],
    isDefault = false,
  ): void => {
    for (let a = from; a <= to; a += MAX_CHUNK_LINES) {
      const b = Math.min(to, a + MAX_CHUNK_LINES - 1);
      const body = lines.slice(a, b + 1).join("\n");
      if (body.trim() === "") continue;
      // Only the first window of a long definition is "the definition"; the rest are mentions.
      out.push({
        line_start: a + 1,
        line_end: b + 1,
        ...(a === from && symbol !== undefined ? { symbol } : {}),
        kind: a === from ? kind : "text",
        text: body,
        ...(a === from && def !== undefined && !markdown
          ? { head: [headOf(from, def, b), ...overloads.map((o) => headOf(o, o, to))].join("\n") }
          : {}),
        ...(a === from && exported !== undefined ? { exported } : {}),
        ...(a === from && isDefault ? { isDefault: true as const } : {}),
      });
    }
  };
  let prev = 0;
  for (let k = 0; k < starts.length; k++) {
    const st = starts[k]!;
    if (st.line < prev) continue;
    if (st.line > prev && k === 0) {
      const documented = !markdown && /^(#!.*\n)?\s*\/\*\*/.test(lines.slice(0, st.line).join("\n"));
      push(
        prev,
        st.line - 1,
        documented ? moduleName : undefined,
        documented && moduleName !== undefined ? "module" : "text",
      );
    }
    // Overloads: the signatures of a function and its implementation that follow it are one definition,
    // whose description is the first one's doc comment and whose head holds every declaration.
    let last = k;
    while (
      st.kind === "function" &&
      last + 1 < starts.length &&
      starts[last + 1]!.symbol === st.symbol &&
      starts[last + 1]!.kind === "function" &&
      starts[last + 1]!.line > starts[last]!.line
    )
      last++;
    // The next definition that starts below this one (a scan, not a copy of the rest: linear over a file).
    let nx = last + 1;
    while (nx < starts.length && starts[nx]!.line <= starts[last]!.line) nx++;
    const next = starts[nx];
    const end = next ? next.line - 1 : lines.length - 1;
    const overloads = starts.slice(k + 1, last + 1).map((o) => o.def);
    push(st.line, end, st.symbol, st.kind, st.def, exportedOf(st), overloads, isDefaultOf(st));
    k = last;
    prev = end + 1;
  }
  if (starts.length === 0) push(0, lines.length - 1, undefined, "text");
  return out;
}
