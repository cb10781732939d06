/**
 * Test cases for a Python function, from what its code shows: doctest examples (`>>>` with the
 * expected output) become value assertions (`==`, `pytest.approx` for floats, `pytest.raises` for a
 * traceback); `raise` statements under a simple guard on one parameter become `pytest.raises` cases;
 * anything else is a marked skip stub, never an assertion that checks nothing.
 */
import type { CodeLanguage, Declaration } from "../lib/code/languages/types.js";
import type { PythonDocument } from "../lib/code/languages/python/index.js";

export interface PyCase {
  name: string;
  /** Statements before the assertion (doctest set-up lines). */
  setup: string[];
  kind: "equal" | "approx" | "raises" | "skip";
  /** The expression under test (for raises: the statement that raises). */
  expr: string;
  expected?: string;
  /** For skip: why. */
  reason?: string;
  from_example: boolean;
}

interface Example {
  source: string;
  want: string;
}

/** The doctest examples of a docstring, as doctest reads them: `>>> `, `... ` continuations, output to a blank line or the next prompt. */
export function doctestExamples(doc: string): Example[] {
  const lines = doc.split("\n");
  const out: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^(\s*)>>> ?(.*)$/.exec(lines[i]!);
    if (!m) continue;
    const indent = m[1]!.length;
    const src = [m[2]!];
    while (i + 1 < lines.length && /^\s*\.\.\.( |$)/.test(lines[i + 1]!))
      src.push(lines[++i]!.trim().replace(/^\.\.\. ?/, ""));
    const want: string[] = [];
    while (i + 1 < lines.length && lines[i + 1]!.trim() !== "" && !/^\s*>>>/.test(lines[i + 1]!))
      want.push(lines[++i]!.slice(indent));
    out.push({ source: src.join("\n"), want: want.join("\n") });
  }
  return out;
}

/** True when `text` is a Python literal display (numbers, strings, bytes, tuples, lists, dicts, sets, True/False/None). */
export function isLiteral(py: CodeLanguage<PythonDocument>, text: string): boolean {
  if (text.trim() === "") return false;
  // Anything but literal tokens and punctuation (names other than the three constants, calls, `<...>` reprs) is not one.
  const stripped = text.replace(
    /("""[\s\S]*?"""|'''[\s\S]*?'''|[rbuRBU]{0,2}"(?:[^"\\\n]|\\.)*"|[rbuRBU]{0,2}'(?:[^'\\\n]|\\.)*')/g,
    "0",
  );
  if (/[<>=;@`$]/.test(stripped)) return false;
  const names = stripped.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? [];
  if (names.some((n) => !/^(True|False|None|inf|nan|e|j|E|J)$/.test(n) && !/^0[xXoObB]/.test(n))) return false;
  if (names.some((n) => n === "inf" || n === "nan")) return false;
  const doc = py.parse(`_ = ${text}\n`);
  return doc.diagnostics.length === 0;
}

const FLOAT = /(^|[^\w.])(\d+\.\d*|\.\d+|\d+[eE][-+]?\d+)/;

/** The exception class of a doctest traceback's last line (`ValueError: bad` → ValueError). */
function tracebackError(want: string): string | undefined {
  const lines = want.split("\n").filter((l) => l.trim() !== "");
  if (!/^Traceback \(most recent call last\)/.test(lines[0] ?? "")) return undefined;
  const last = lines[lines.length - 1]!.trim();
  const m = /^([A-Za-z_][\w.]*)(:|$)/.exec(last);
  return m ? m[1]!.split(".").pop() : undefined;
}

function caseName(base: string, n: number): string {
  return `test_${base}_${n}`;
}

export function exampleCases(py: CodeLanguage<PythonDocument>, fn: Declaration, base: string): PyCase[] {
  const out: PyCase[] = [];
  const setup: string[] = [];
  let n = 0;
  for (const ex of doctestExamples(fn.doc)) {
    if (ex.want === "") {
      setup.push(ex.source);
      continue;
    }
    n++;
    const err = tracebackError(ex.want);
    const name = caseName(base, n);
    if (err) {
      out.push({ name, setup: [...setup], kind: "raises", expr: ex.source, expected: err, from_example: true });
      continue;
    }
    const single = !ex.source.includes("\n");
    const print = /^print\((.*)\)$/s.exec(ex.source.trim());
    if (single && print && !print[1]!.includes(",")) {
      out.push({
        name,
        setup: [...setup],
        kind: "equal",
        expr: `str(${print[1]})`,
        expected: JSON.stringify(ex.want),
        from_example: true,
      });
      continue;
    }
    if (single && isLiteral(py, ex.want)) {
      const approx = FLOAT.test(ex.want) && !/["']/.test(ex.want) && !/[[{(]/.test(ex.want.trim()[0] ?? "");
      out.push({
        name,
        setup: [...setup],
        kind: approx ? "approx" : "equal",
        expr: ex.source,
        expected: ex.want.replace(/\n\s*/g, " "),
        from_example: true,
      });
      continue;
    }
    if (single && !/^</.test(ex.want.trim()) && !/ at 0x[0-9a-f]+/i.test(ex.want) && !ex.want.includes("\n")) {
      // doctest compares the repr; so does this
      out.push({
        name,
        setup: [...setup],
        kind: "equal",
        expr: `repr(${ex.source})`,
        expected: JSON.stringify(ex.want),
        from_example: true,
      });
      continue;
    }
    out.push({
      name,
      setup: [],
      kind: "skip",
      expr: ex.source,
      reason: `the doctest output ${JSON.stringify(ex.want.slice(0, 60))} is not a value a test can compare`,
      from_example: true,
    });
  }
  return out;
}

/** Parameters a call must give (no default, not *args/**kw); `self`/`cls` of a method left out. */
export function requiredParams(fn: Declaration): string[] {
  const params = (fn.params ?? []).filter(
    (p, i) => !(i === 0 && fn.kind === "method" && (p.name === "self" || p.name === "cls")),
  );
  return params.filter((p) => p.default === undefined && p.kind !== "vararg" && p.kind !== "kwarg").map((p) => p.name);
}

/**
 * `raise E(...)` under `if <param> <op> <literal>:`, `if <param> is None:` or `if not <param>:` at the
 * top of the body, when that parameter is the only one the call must give: the value that meets the guard.
 */
export function guardCases(fn: Declaration, source: string, call: string, base: string): PyCase[] {
  const required = requiredParams(fn);
  const names = (fn.params ?? []).filter((q) => q.kind !== "vararg" && q.kind !== "kwarg").map((q) => q.name);
  const body = source.slice(fn.start, fn.end);
  const out: PyCase[] = [];
  const re = /^([ \t]+)if[ \t]+(.+?):[ \t]*\n\1[ \t]+raise[ \t]+([A-Za-z_][\w.]*)/gm;
  let n = 0;
  for (const m of body.matchAll(re)) {
    const cond = m[2]!.trim();
    const exc = m[3]!.split(".").pop()!;
    let value: string | undefined;
    const p = /^(?:not\s+)?([A-Za-z_]\w*)/.exec(cond)?.[1];
    // the guard's parameter is the only value the call must give
    if (p === undefined || !names.includes(p) || required.some((r) => r !== p)) continue;
    const esc = p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const cmp = new RegExp(`^${esc}\\s*(<=|>=|<|>|==)\\s*(-?\\d+(?:\\.\\d+)?)$`).exec(cond);
    if (cmp) {
      const c = Number(cmp[2]);
      const op = cmp[1];
      value = String(op === "<" ? c - 1 : op === ">" ? c + 1 : c);
    } else if (new RegExp(`^${esc}\\s+is\\s+None$`).test(cond)) value = "None";
    else if (new RegExp(`^not\\s+${esc}$`).test(cond)) value = "None";
    if (value === undefined) continue;
    n++;
    out.push({
      name: `test_${base}_raises_${exc.toLowerCase()}${n > 1 ? `_${n}` : ""}`,
      setup: [],
      kind: "raises",
      expr: `${call}(${p}=${value})`,
      expected: exc,
      from_example: false,
    });
  }
  return out;
}
