/**
 * JSDoc `@example` blocks that state a result become assertions (docs/agents.md, "testgen"). The block
 * is read as code, statement by statement; a statement that calls the function under test (directly,
 * through a namespace such as `_.chunk`, after `await`, inside `console.log(…)`, as `const x = …`, or
 * later through that `x`) and is followed by a stated result becomes one case:
 *
 *     camelCase("foo-bar") // => "fooBar"          add(1, 2); // 3
 *     add(1, 2); // Returns 3                      add(1, 2) // → 3
 *     _.chunk(["a", "b"], 1);                      console.log(parse("a=1"));
 *     // => [["a"], ["b"]]                         // { a: "1" }
 *     parse("a=1&b=2")                             split(1, 0) // throws RangeError
 *     // => {
 *     //   a: "1",
 *     //   b: "2"
 *     // }
 *
 * The result is the comment after the statement, or the comment lines right below it; a value may run
 * over several comment lines. It must be a value a test can write down (literals, arrays and objects of
 * them, the block's own consts, a few globals such as `new Date(…)`); the arguments may use the block's
 * earlier declarations, which the test then repeats. What cannot be turned into an assertion is
 * returned with the reason (a result that is not a value, an argument the example never defines).
 */
import { existsSync } from "node:fs";
import { builtinModules, createRequire } from "node:module";
import { join } from "node:path";
import type * as TS from "typescript";
import { ts } from "../lib/code/typescript.js";
import { FS_WRITES } from "./effects.js";

export interface ExampleCase {
  /** The call as the test writes it, callee spelled as imported (`camelCase("foo-bar")`). */
  call: string;
  /** The expected value, as a source expression (`"fooBar"`); "" for `toThrow` without a class. */
  expected: string;
  /** How to compare: `toBe` for primitives, `toEqual` for arrays and objects, or the special matchers. */
  matcher: "toBe" | "toEqual" | "toBeUndefined" | "toBeNull" | "toBeNaN" | "toThrow";
  /** 1-based line of the example in the doc comment. */
  line: number;
  /** Declarations of the block the call (or the expected value) uses, in order, as statements. */
  setup?: string[];
  /** The example awaited the call. */
  awaited?: boolean;
  /** The setup awaits (a Node built-in's `await import(…)`, an awaited call): the test is async. */
  asyncSetup?: boolean;
  /** Other exports of the module under test the case uses without the example importing them (`LogLevel`). */
  imports?: string[];
}

/** A statement of an example that called the function and stated something, but gave no assertion. */
export interface SkippedExample {
  line: number;
  /** The statement, shortened. */
  code: string;
  reason: string;
}

export interface ExampleOptions {
  /** How the test spells the callee (the import's name; `Alias.method` for a static method). Default: the callee. */
  as?: string;
  /**
   * Whether a package the example imports resolves from the workspace (a declared dependency, or installed
   * in its node_modules): the test then imports it the same way. Without it, only Node built-ins are imported.
   */
  resolves?: (spec: string) => boolean;
  /**
   * What the function under test reads of its environment (`process.argv`, a stream's `isTTY`, …): the
   * results its examples state are the author's terminal and command line, so none becomes an assertion.
   */
  environment?: string;
  /**
   * The run-time exports of the module under test: an example may use them without importing them
   * (`greaterThan(LogLevel.error, LogLevel.info)`), and the test then imports them beside the function.
   */
  exports?: ReadonlySet<string>;
  /**
   * The function's declared return type (`string`): a result stated unquoted (`// http://a.com`,
   * `// Result: file.ext`) of a function that returns a string is that string.
   */
  returns?: string;
}

/** Globals an example may use in arguments, declarations and expected values. */
const GLOBALS = new Set([
  "undefined",
  "NaN",
  "Infinity",
  "Math",
  "JSON",
  "Number",
  "String",
  "Boolean",
  "Array",
  "Object",
  "Date",
  "RegExp",
  "Symbol",
  "Map",
  "Set",
  "WeakMap",
  "WeakSet",
  "BigInt",
  "Promise",
  "Error",
  "TypeError",
  "RangeError",
  "SyntaxError",
  "URL",
  "URLSearchParams",
  "Uint8Array",
  "Uint8ClampedArray",
  "Int8Array",
  "Int16Array",
  "Uint16Array",
  "Int32Array",
  "Uint32Array",
  "Float32Array",
  "Float64Array",
  "BigInt64Array",
  "BigUint64Array",
  "DataView",
  "ArrayBuffer",
  "Proxy",
  "Reflect",
  "Function",
  "Blob",
  "Buffer",
  "ReferenceError",
  "EvalError",
  "URIError",
  "AggregateError",
  "TextEncoder",
  "TextDecoder",
  "parseInt",
  "parseFloat",
  "isNaN",
  "isFinite",
  "encodeURIComponent",
  "decodeURIComponent",
]);

/** The error classes every JavaScript realm has: an example may throw them and a test may name them. */
export const BUILTIN_ERRORS = new Set([
  "Error",
  "TypeError",
  "RangeError",
  "SyntaxError",
  "ReferenceError",
  "EvalError",
  "URIError",
  "AggregateError",
]);

/** Lines of a multi-line result that are read, at most. */
const MAX_VALUE_LINES = 40;
/** Lines one statement of an example may span, at most. */
const MAX_STATEMENT_LINES = 30;

/** The `@example` blocks of a doc comment's text (`comment.value`), fences and gutters removed, with their first line. */
export function exampleBlocks(commentValue: string): { text: string; line: number }[] {
  const lines = commentValue.split("\n").map((l) => l.replace(/^\s*\*+ ?/, "").replace(/\s+$/, ""));
  const out: { text: string; line: number }[] = [];
  let cur: string[] | undefined;
  let start = 0;
  const flush = (): void => {
    // Fence lines stay as blank lines, so that line numbers hold.
    if (cur) out.push({ text: cur.map((l) => (/^\s*```/.test(l) ? "" : l)).join("\n"), line: start });
    cur = undefined;
  };
  let inFence = false;
  lines.forEach((l, i) => {
    if (/^\s*```/.test(l)) inFence = !inFence;
    const tag = !inFence && /^\s*@(\w+)/.exec(l);
    if (tag) {
      flush();
      if (tag[1] === "example") {
        cur = [l.replace(/^\s*@example\s*/, "").replace(/^<caption>.*?<\/caption>\s*/, "")];
        start = i + 1;
      }
      return;
    }
    cur?.push(l);
  });
  flush();
  return out;
}

function parse(text: string): TS.SourceFile | undefined {
  const sf = ts.createSourceFile("e.ts", text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  return (sf as unknown as { parseDiagnostics: unknown[] }).parseDiagnostics.length > 0 ? undefined : sf;
}

/**
 * One expression parsed alone; undefined when `text` is not exactly one expression. `a, b` (a comma
 * expression) is several, as a printed list shows them, unless `commas`.
 */
function expression(text: string, commas = false): { e: TS.Expression; sf: TS.SourceFile } | undefined {
  if (text.trim() === "") return undefined;
  const sf = parse(`(${text}\n);`);
  const st = sf?.statements[0];
  if (!sf || sf.statements.length !== 1 || !st || !ts.isExpressionStatement(st)) return undefined;
  let e = st.expression;
  while (ts.isParenthesizedExpression(e)) e = e.expression;
  if (!commas && ts.isBinaryExpression(e) && e.operatorToken.kind === ts.SyntaxKind.CommaToken) return undefined;
  return { e, sf };
}

/** Names of a binding (an identifier or a destructuring pattern). */
function bindingNames(name: TS.BindingName, out: Set<string>): void {
  if (ts.isIdentifier(name)) out.add(name.text);
  else for (const el of name.elements) if (!ts.isOmittedExpression(el)) bindingNames(el.name, out);
}

/** Identifiers `node` reads that it does not declare itself (parameters and inner declarations are bound). */
export function freeNames(node: TS.Node): Set<string> {
  const out = new Set<string>();
  const visit = (n: TS.Node, bound: Set<string>): void => {
    if (ts.isIdentifier(n)) {
      if (!bound.has(n.text)) out.add(n.text);
      return;
    }
    if (ts.isTypeNode(n)) return;
    if (ts.isPropertyAccessExpression(n)) return visit(n.expression, bound);
    if (ts.isPropertyAssignment(n)) {
      if (ts.isComputedPropertyName(n.name)) visit(n.name.expression, bound);
      return visit(n.initializer, bound);
    }
    if (ts.isShorthandPropertyAssignment(n)) return visit(n.name, bound);
    if (ts.isAsExpression(n) || ts.isSatisfiesExpression(n)) return visit(n.expression, bound);
    if (ts.isFunctionLike(n)) {
      const inner = new Set(bound);
      if ((ts.isFunctionExpression(n) || ts.isFunctionDeclaration(n)) && n.name) inner.add(n.name.text);
      for (const p of n.parameters) bindingNames(p.name, inner);
      const body = (n as { body?: TS.Node }).body;
      if (body) {
        const declared = (x: TS.Node): void => {
          if (ts.isVariableDeclaration(x)) bindingNames(x.name, inner);
          else if ((ts.isFunctionDeclaration(x) || ts.isClassDeclaration(x)) && x.name) inner.add(x.name.text);
          if (!ts.isFunctionLike(x)) ts.forEachChild(x, declared);
        };
        ts.forEachChild(body, declared);
      }
      for (const p of n.parameters) if (p.initializer) visit(p.initializer, inner);
      if (body) visit(body, inner);
      return;
    }
    if (ts.isVariableDeclaration(n)) {
      if (n.initializer) visit(n.initializer, bound);
      return;
    }
    if (ts.isBindingElement(n)) {
      if (n.initializer) visit(n.initializer, bound);
      return;
    }
    if (ts.isMethodDeclaration(n) || ts.isPropertyDeclaration(n)) return;
    ts.forEachChild(n, (c) => visit(c, bound));
  };
  visit(node, new Set());
  return out;
}

/**
 * Node built-ins an example may import for its arguments (`import {Duplex} from 'node:stream'`): the test
 * imports them too. Modules that reach processes or the network are not among them; `vm` runs only the
 * example's own code; `fs` is imported, and then only its lazy read streams may be used (see `fsUse`).
 */
const SAFE_BUILTINS = new Set([
  "stream",
  "url",
  "path",
  "util",
  "buffer",
  "events",
  "string_decoder",
  "querystring",
  "vm",
  "fs",
]);
const builtinExports = createRequire(import.meta.url);

/**
 * Why an example's use of `member` of `node:fs` keeps it from becoming an assertion, or undefined when
 * the test may make the same call: `createReadStream(path)` opens nothing the test has to keep (the test
 * adds an error listener, so a path the author had and this machine lacks fails no run). Writes land
 * outside a temp dir; other reads depend on the author's files.
 */
function fsUse(member: string): string | undefined {
  if (member === "createReadStream") return undefined;
  if (FS_WRITES.test(member)) return `it writes files (\`fs.${member}\`), outside a temp dir`;
  return `it reads the file system (\`fs.${member}\`): the result depends on the files of the author's machine`;
}

/**
 * The home of someone's machine at the start of an absolute path (`/Users/sindresorhus/x`, `/home/u`,
 * `C:\\Users\\u`, `~/x`): a stated result under it that no argument names came from that machine.
 */
const AUTHOR_HOME = /(?:^|[\s:'"`=(])(\/Users\/[\w.-]+|\/home\/[\w.-]+|[A-Za-z]:\\Users\\[\w.-]+|~(?=\/))/;
/** A relative file name (`unicorn.png`, `./foo`, `../a/b.js`). */
const FILE_NAME = /^(?:\.{1,2}\/[^\s]*|[\w@-][\w.@-]*(?:\/[\w.@-]+)*\.[A-Za-z][\w]{0,4})$/;
/** A comment of the block that says a file exists on disk, or names a file the example is split into (`// foo.js`). */
const FILES_SHOWN =
  /^\s*\/\/\s*[\w.-]+\.[A-Za-z]\w{0,4}\s*$|\/\/.*\b(?:on (?:the )?disk|exists? in the (?:current )?(?:directory|folder))\b/im;
/** A command line the example runs as (`// $ ts-node foo.ts -f --unicorn`): its results are that command's. */
const COMMAND_LINE = /^\s*\/\/\s*\$\s+((?:node|ts-node|tsx|bun|deno|npx)\s+\S+\s+-.*)$/m;
/** A result comment inside a function or block of the example (`// => v`, `// '*'`, `// true`). */
const INNER_RESULT = /\/\/\s*(?:=+>|→|->|['"`\d[{]|(?:true|false|null|undefined)\b)/;
/** A Windows path (`C:\\x`): what a path function makes of it depends on the platform it runs on. */
const WINDOWS_PATH = /^[A-Za-z]:\\/;

/** A random source an example's own code calls. */
const RANDOM = /\b(?:Math\.random|crypto\.(?:getRandomValues|randomUUID|randomInt|randomBytes))\b/;

/** What of the process an example's call reads: the results are the author's environment. */
const PROCESS_STATE = /\bprocess\.(argv|env|cwd|stdout|stdin|stderr|execArgv)\b/;

interface Scope {
  /** The block's declarations so far: name → its statement (as the test writes it) and what it needs. */
  decls: Map<string, { text: string; needs: string[] }>;
  /** Names the block imports that the test cannot: name → the module. */
  foreign: Map<string, string>;
  /** Names the block imports that the test imports too: name → the module and, for a named import, the export. */
  modules: Map<string, { spec: string; member?: string }>;
  /** Names the function was given in a statement without a stated result (what it did to them may be stated later). */
  affected: Set<string>;
  /** Steps so far (their keys in `decls`). */
  steps: number;
  /** Names bound to a call of the callee (`const r = f(x)`): name → the call. */
  results: Map<string, { call: string; awaited: boolean; needs: string[]; steps?: number }>;
  /** Names declared from the callee's results (`const n = r.length`): a stated value of them is asserted after their setup. */
  derived: Set<string>;
  /** Names the block declares (they shadow the module's exports). */
  local: Set<string>;
  /** Names bound to a call of one of the block's own functions that calls the callee: name → that function. */
  viaLocal: Map<string, string>;
  /** The block's own functions that call the callee. */
  wrappers: Set<string>;
}

/** The result stated by a comment: after a marker (`=>`, `returns`, `→`, …) or, `bare`, the whole text. */
const MARKER =
  /^(?:=+>|->|→|⇒|returns?\b:?|result(?:s| is)?\b:?|output(?:s)?\b:?|prints?\b:?|logs?\b:?|gives?\b:?|evaluates to\b:?|yields?\b:?)\s*/i;
/** `result will be v`, `x is v`, `// x === v`: weaker markers, only read when the value is a literal. */
const WEAK = /^(?:[\w$.]+\s+)?(?:will be|would be|is|equals|===?)\s+/i;
/** `On terminals with Unicode symbols:  √ check`: a labelled alternative (the label has a space). */
const ALTERNATIVE = /^[A-Za-z][^:]*\s[^:]*:\s+(\S.*)$/;
const THROWS = /^(?:=+>\s*|→\s*)?(?:throws?|rejects?)(?:\s+(?:an?\s+)?`?([A-Z][\w$]*)`?)?\b/i;
/** `// => Promise<v>`, `// Promise { v }`, `// resolves to v`, `// a promise that resolves with v`: the awaited result is v. */
const PROMISED =
  /^(?:(?:=+>|->|→|returns?:?)\s*)?(?:Promise\s*<([^]*)>|Promise\s*\{\s*([^]*?)\s*\}|(?:an?\s+)?(?:promise\s+(?:that\s+|which\s+)?)?(?:resolves|resolving|fulfills)\s+(?:to|with)\s*:?\s+([^]*))$/i;

/** `RangeError: message` (or `Uncaught TypeError …`) where a result is stated: the call throws that class. */
const SHOWN_ERROR = /^(?:=+>\s*|→\s*)?(?:Uncaught\s+)?([A-Z][\w$]*Error)(?::\s|\s*$)/;
const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
/**
 * A date as `Date.prototype.toString` prints it (`Thu Sep 11 2014 00:00:00`, `Tue Sep 30 2014
 * 23:59:59.999`, with or without `GMT+0200 (…)`): date libraries state their results so.
 */
const PRINTED_DATE =
  /\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*\s+(Jan|Feb|Mar|Apr|May|June?|July?|Aug|Sept?|Oct|Nov|Dec)[a-z]*\s+(\d{1,2})\s+(\d{4})(?:\s+(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{3}))?)?)?(\s+GMT[+-]\d{4}(?:\s+\([^)]*\))?)?/g;

/**
 * `text` with each printed date outside a string as the `new Date(…)` it shows: local time as printed
 * (the examples build their arguments in local time too), or the instant where the offset is printed;
 * `Invalid Date` is `new Date(NaN)`. Years before 100 stay (the constructor reads them as 19xx).
 */
export function printedDates(text: string): string {
  const outside = (at: number): boolean => (text.slice(0, at).match(/['"`]/g)?.length ?? 0) % 2 === 0;
  return text
    .replace(PRINTED_DATE, (all: string, mon: string, d: string, y: string, ...rest: unknown[]) => {
      const at = rest[5] as number;
      if (!outside(at) || Number(y) < 100) return all;
      const [h, mi, sec, ms, gmt] = rest as (string | undefined)[];
      if (gmt !== undefined) return `new Date(${JSON.stringify(all.trim())})`;
      const parts = [y, String(MONTHS.indexOf(mon.slice(0, 3).toLowerCase())), String(Number(d))];
      if (h !== undefined) parts.push(String(Number(h)), String(Number(mi)), String(Number(sec ?? 0)));
      if (ms !== undefined) parts.push(String(Number(ms)));
      return `new Date(${parts.join(", ")})`;
    })
    .replace(/\bInvalid Date\b/g, (all: string, at: number) => (outside(at) ? "new Date(NaN)" : all));
}

interface Stated {
  kind: "value" | "throws";
  value: string;
  /** A strong marker (`=>`, `returns`, …), or a throw: worth reporting when it does not convert. */
  marked: boolean;
  /** The comment lines the value took (for continuation). */
  thrown?: string;
  /** The value is what the call's promise resolves to (`// => Promise<v>`, `// resolves to v`). */
  promised?: boolean;
  /** The value lists what iterating the result gives (`// yields 0, 1, 2`). */
  iterated?: boolean;
}

/**
 * What a comment (first line) plus its following comment lines state: a throw, or a value after a
 * marker (`=>`, `returns`, …), after a weaker one (`result will be`, `is`), or bare. `logged`: the
 * call was printed, and printed strings have no quotes (`// 2m` is the string "2m").
 */
function stated(first: string, rest: string[], logged: boolean): Stated {
  const c = printedDates(first.trim());
  rest = rest.map(printedDates);
  const t = THROWS.exec(c);
  if (t) return { kind: "throws", value: "", marked: true, ...(t[1] ? { thrown: t[1] } : {}) };
  // `//=> RangeError: Invalid time value`: what Node prints of an error thrown, not returned (a printed
  // error object would be the result of a `console.log`).
  const shown = logged ? null : SHOWN_ERROR.exec(c);
  if (shown) return { kind: "throws", value: "", marked: true, thrown: shown[1]! };
  const p = PROMISED.exec(c);
  if (p) {
    const inner = (p[1] ?? p[2] ?? p[3] ?? "").trim();
    // `Promise { 'a' }` is how Node prints a settled promise; `Promise<void>` states no value.
    if (inner !== "" && !/^(void|unknown|any)$/.test(inner)) return { ...stated(inner, rest, logged), promised: true };
  }
  const m = MARKER.exec(c);
  // `// yields 0, 1, 2`: the values iterating the result gives, in order.
  const items = m && /^yields?\b/i.test(m[0]) ? sequence(c.slice(m[0].length)) : undefined;
  if (items !== undefined) return { kind: "value", value: `[${items.join(", ")}]`, marked: true, iterated: true };
  const tries = [m ? c.slice(m[0].length) : undefined, WEAK.exec(c) ? c.replace(WEAK, "") : undefined, c];
  for (const text of tries) {
    if (text === undefined) continue;
    const value = valueText(text, rest);
    // Printed output names no variables: `// a-b` is the string "a-b", not `a - b`.
    const printedNames =
      logged && value !== undefined && [...freeNames(expression(value)!.e)].some((n) => !GLOBALS.has(n));
    if (value !== undefined && !printedNames) return { kind: "value", value, marked: m !== null };
  }
  // Output per environment (`// On terminals with Unicode: √ check` / `// On others: √ check`): one
  // value when every line states the same.
  const alts = [c, ...rest].map((l) => ALTERNATIVE.exec(l.trim())?.[1]?.trim());
  if (rest.length > 0 && alts.every((a) => a !== undefined && a === alts[0])) return stated(alts[0]!, [], logged);
  const text = (m ? c.slice(m[0].length) : c).trim();
  // Printed output that is no expression: a string as console.log shows it.
  // Only a lone line: several (`// On terminals with Unicode: ✔` / `// On others: √`) describe alternatives.
  // Output that opens with a quoted string (`"Calculating..." then 5`) describes what is printed instead.
  if (logged && text !== "" && rest.length === 0 && !/^[[{("'`]/.test(text) && !text.includes("\n"))
    return { kind: "value", value: JSON.stringify(text), marked: true };
  return { kind: "value", value: text, marked: m !== null };
}

/** The value in `text` (continued by `rest` while it does not parse), cut before trailing prose; undefined when none parses. */
function valueText(text: string, rest: string[]): string | undefined {
  let acc = text.trim().replace(/;$/, "");
  if (acc === "") {
    if (rest.length === 0) return undefined;
    acc = rest[0]!.trim();
    rest = rest.slice(1);
  }
  for (let i = 0; i <= Math.min(rest.length, MAX_VALUE_LINES); i++) {
    const whole = acc.replace(/;$/, "");
    // `0, 1, 2, 3` is a list of values, not one (a comma expression): no prefix of it is the value either.
    if (sequence(whole)) return undefined;
    // `will be true.`, `=> 10.`: the sentence's full stop is no part of the value.
    // `[1, [2]] // only one level`: a remark after the value is no part of it.
    const stop = /[^.]\.$/.test(whole) ? expression(whole.slice(0, -1)) : undefined;
    const parsed = stop ?? expression(whole);
    // `"abc" (typed \`string\`)`, `{ a: 3 } (typed as …)` parse as a call of the value: a value and a remark.
    const called =
      parsed === undefined
        ? undefined
        : ts.isCallExpression(parsed.e)
          ? parsed.e.expression
          : ts.isTaggedTemplateExpression(parsed.e)
            ? parsed.e.tag
            : undefined;
    const literalCalled =
      called !== undefined &&
      (ts.isLiteralExpression(called) ||
        ts.isObjectLiteralExpression(called) ||
        ts.isArrayLiteralExpression(called) ||
        ts.isParenthesizedExpression(called) ||
        called.kind === ts.SyntaxKind.TrueKeyword ||
        called.kind === ts.SyntaxKind.FalseKeyword ||
        called.kind === ts.SyntaxKind.NullKeyword);
    if (parsed && !literalCalled) return parsed.e.getText(parsed.sf);
    // `3 (the sum)`, `true // why`, `"a", because …`: the value before the prose.
    for (const cut of [" //", " (", ", ", " - ", " – ", ". ", " because", " if "]) {
      const at = whole.indexOf(cut);
      if (at > 0 && expression(whole.slice(0, at))) return whole.slice(0, at).trim();
    }
    // A result over several lines opens a bracket or a template literal on the first.
    if (i === rest.length || !/^[[{(`]/.test(acc.trim())) break;
    acc += `\n${rest[i]!}`;
  }
  return undefined;
}

/** The values of `a, b, c` (a comma expression, as a printed list shows them); undefined for anything else. */
function sequence(text: string): string[] | undefined {
  const p = expression(text, true);
  if (!p || !ts.isBinaryExpression(p.e) || p.e.operatorToken.kind !== ts.SyntaxKind.CommaToken) return undefined;
  const out: string[] = [];
  let e: TS.Expression = p.e;
  while (ts.isBinaryExpression(e) && e.operatorToken.kind === ts.SyntaxKind.CommaToken) {
    out.unshift(e.right.getText(p.sf));
    e = e.left;
  }
  out.unshift(e.getText(p.sf));
  return out;
}

/**
 * `s.match(re)` / `re.exec(s)` compared with an array the example shows: the match's own fields (`index`,
 * `input`, `groups`) are not part of what it shows, so the test compares the matched strings (`[...m]`).
 */
function matchArray(call: string, expected: TS.Expression): string {
  const e = expression(call)?.e;
  if (!e || !ts.isArrayLiteralExpression(expected)) return call;
  const c = unwrap(e).e;
  const isMatch =
    ts.isCallExpression(c) &&
    ts.isPropertyAccessExpression(c.expression) &&
    (c.expression.name.text === "match" || c.expression.name.text === "exec");
  return isMatch ? `[...${call}]` : call;
}

function matcherFor(e: TS.Expression): ExampleCase["matcher"] {
  if (ts.isIdentifier(e) && e.text === "undefined") return "toBeUndefined";
  if (ts.isIdentifier(e) && e.text === "NaN") return "toBeNaN";
  if (e.kind === ts.SyntaxKind.NullKeyword) return "toBeNull";
  if (
    ts.isStringLiteral(e) ||
    ts.isNumericLiteral(e) ||
    ts.isBigIntLiteral(e) ||
    ts.isNoSubstitutionTemplateLiteral(e) ||
    e.kind === ts.SyntaxKind.TrueKeyword ||
    e.kind === ts.SyntaxKind.FalseKeyword ||
    (ts.isPrefixUnaryExpression(e) && ts.isNumericLiteral(e.operand)) ||
    (ts.isIdentifier(e) && e.text === "Infinity")
  )
    return "toBe";
  return "toEqual";
}

/** Whether `e` could hold a value that was computed elsewhere: a call of anything but a known global constructor. */
function callsUnknown(e: TS.Node): boolean {
  let found = false;
  const visit = (n: TS.Node): void => {
    if (found) return;
    if (ts.isCallExpression(n) || ts.isNewExpression(n) || ts.isTaggedTemplateExpression(n)) {
      const callee = ts.isTaggedTemplateExpression(n) ? n.tag : n.expression;
      const root = ts.isPropertyAccessExpression(callee) ? callee.expression : callee;
      if (!ts.isIdentifier(root) || !GLOBALS.has(root.text)) found = true;
    }
    // A function, a template with holes, or a type instantiation (`Promise<string>`) is no value.
    if (ts.isFunctionLike(n) || ts.isTemplateExpression(n) || ts.isExpressionWithTypeArguments(n)) found = true;
    ts.forEachChild(n, visit);
  };
  visit(e);
  return found;
}

/** A `Symbol("d")` call in a stated value: a symbol made there equals no other. */
function freshSymbol(e: TS.Node): string | undefined {
  let found: string | undefined;
  const visit = (n: TS.Node): void => {
    if (found !== undefined) return;
    if (ts.isCallExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === "Symbol") found = n.getText();
    else ts.forEachChild(n, visit);
  };
  visit(e);
  return found;
}

/** What a backslash may escape in a JavaScript string; before anything else it is dropped. */
const ESCAPES = new Set([..."'\"`\\bfnrtvxu0123456789\n\r$"]);

/**
 * A stated string whose backslashes escape nothing (`'\[a\]\.'`, an escaped pattern as printed): the
 * author wrote the text as it shows, backslashes included, which the literal would drop.
 */
export function rawEscapes(value: string): string {
  const p = expression(value);
  if (!p) return value;
  const edits: { pos: number; end: number; text: string }[] = [];
  const visit = (n: TS.Node): void => {
    if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) {
      const raw = n.getText(p.sf);
      const body = raw.slice(1, -1);
      if (/\\./.test(body) && [...body.matchAll(/\\(.)/gs)].some((m) => !ESCAPES.has(m[1]!))) {
        const fixed = body.replace(/\\(.)/gs, (all, c: string) => (ESCAPES.has(c) ? all : `\\\\${c}`));
        edits.push({ pos: n.getStart(p.sf), end: n.end, text: `${raw[0]}${fixed}${raw[raw.length - 1]}` });
      }
      return;
    }
    ts.forEachChild(n, visit);
  };
  visit(p.e);
  let out = p.sf.text;
  for (const e of edits.reverse()) out = out.slice(0, e.pos) + e.text + out.slice(e.end);
  // The text parsed is `(value\n);`.
  return edits.length === 0 ? value : out.slice(1, out.length - 3);
}

const short = (s: string, n = 60): string => {
  const one = s.replace(/\s+/g, " ").trim();
  return one.length > n ? `${one.slice(0, n - 3)}...` : one;
};

/** Reads the examples of a doc comment: the cases for calls of `callee`, and what could not be converted. */
export function readExamples(
  commentValue: string,
  callee: string,
  opts: ExampleOptions = {},
): { cases: ExampleCase[]; skipped: SkippedExample[] } {
  const cases: ExampleCase[] = [];
  const skipped: SkippedExample[] = [];
  const seen = new Set<string>();
  const as = opts.as ?? callee;
  const [cls, method] = callee.includes(".") ? callee.split(".", 2) : [undefined, callee];
  // The names the examples reach the function through (`R` of `R.map(…)`): the module as a namespace.
  const namespaces = new Set<string>();
  if (cls === undefined)
    for (const m of commentValue.matchAll(
      new RegExp(`(?<![\\w$.])([A-Za-z_$][\\w$]*)\\.${method!.replace(/\$/g, "\\$")}\\s*\\(`, "g"),
    ))
      if (!GLOBALS.has(m[1]!)) namespaces.add(m[1]!);
  for (const block of exampleBlocks(commentValue)) {
    const before = cases.length + skipped.length;
    const scope: Scope = {
      decls: new Map(),
      foreign: new Map(),
      modules: new Map(),
      affected: new Set(),
      steps: 0,
      results: new Map(),
      derived: new Set(),
      local: new Set(),
      viaLocal: new Map(),
      wrappers: new Set(),
    };
    /** Whether the test has `n`: a declaration of the block, or an export of the module under test the block uses unimported. */
    const known = (n: string): boolean => scope.decls.has(n) || exported(n);
    const exported = (n: string): boolean =>
      opts.exports?.has(n) === true && n !== rootOf(as) && !scope.local.has(n) && !scope.foreign.has(n);
    const lines = block.text.split("\n");
    // An async IIFE around the example (`(async () => {` … `})();`) is read as the block itself.
    const open = lines.findIndex((l) => /^\s*\(\s*async\s*(\(\)\s*=>|function\s*\(\))\s*\{\s*$/.test(l));
    const close = lines.findLastIndex((l) => /^\s*\}\s*\)\s*\(\s*\)\s*;?\s*$/.test(l));
    if (open >= 0 && close > open) lines[open] = lines[close] = "";
    const isComment = (l: string): boolean => /^\s*(\/\/|\/\*|\*)/.test(l);
    // `new Date(1984, 4, 12, 00, 00, 00)`: a zero written `00` is a legacy octal literal, which does not parse.
    for (let k = 0; k < lines.length; k++)
      if (!isComment(lines[k]!)) lines[k] = lines[k]!.replace(/(?<=[(,]\s*)00+(?=\s*[,)])/g, "0");
    readLines(lines, block.line);

    /** Reads `lines` statement by statement (the block, or the body of a callback given the call's result); `base`: the first one's line. */
    function readLines(lines: string[], base: number): void {
      // Results stated above the calls (`// Returns [0, 1]` / `range(2);`): every line that calls the
      // function has no comment of its own and a marked result right above it.
      const calls = new RegExp(`(?<![\\w$])${method!.replace(/\$/g, "\\$")}\\s*\\(`);
      const callLines = lines.map((_, k) => k).filter((k) => !isComment(lines[k]!) && calls.test(lines[k]!));
      const above = (k: number): string[] => {
        const out: string[] = [];
        for (let n = k - 1; n >= 0 && /^\s*\/\//.test(lines[n]!); n--)
          out.unshift(lines[n]!.replace(/^\s*\/\/\s?/, ""));
        return out;
      };
      // The first call's comment must open its lines (after a blank line or none): one right below other
      // code is that code's result (`console.log(f.name);` / `//=> 'f'` / `mimic(f, g);`).
      const first = callLines[0] ?? 0;
      const opens = first - above(first).length - 1;
      const statedAbove =
        callLines.length > 0 &&
        (opens < 0 || lines[opens]!.trim() === "") &&
        callLines.every((k) => !hasComment(lines[k]!) && MARKER.test(above(k)[0]?.trim() ?? ""));
      let i = 0;
      while (i < lines.length) {
        const t = lines[i]!.trim();
        if (t === "" || isComment(t)) {
          i++;
          continue;
        }
        // The statement: the fewest lines from here that parse.
        let sf: TS.SourceFile | undefined;
        let j = i;
        for (; j < lines.length && j - i < MAX_STATEMENT_LINES; j++) {
          sf = parse(lines.slice(i, j + 1).join("\n"));
          if (sf) break;
        }
        if (!sf || sf.statements.length === 0) {
          i++;
          continue;
        }
        const text = sf.text;
        // The comment after the last statement on its line, and the comment lines right below.
        const last = sf.statements[sf.statements.length - 1]!;
        const trailing = ts.getTrailingCommentRanges(text, last.end) ?? [];
        const below: string[] = [];
        for (let k = j + 1; k < lines.length && /^\s*\/\//.test(lines[k]!); k++)
          below.push(lines[k]!.replace(/^\s*\/\/\s?/, ""));
        const comment = trailing.map((r) =>
          text
            .slice(r.pos, r.end)
            .replace(/^\/\/\s?|^\/\*+|\*+\/$/g, "")
            .trim(),
        );
        for (const st of sf.statements) {
          const isLast = st === last;
          if (statedAbove) read(st, [], isLast ? above(i) : [], base + i + lineIn(st));
          else read(st, isLast ? comment : [], isLast ? below : [], base + i + lineIn(st));
        }
        i = j + 1;
      }
    }
    // Results the block states that became neither a case nor a reason: they are of other expressions
    // than the call (a variable a callback set, a stream's chunks), which a test cannot rebuild.
    const callsMethod = new RegExp(`\\b${method!.replace(/\$/g, "\\$")}\\s*(\\(|\x60)`);
    if (cases.length + skipped.length === before && callsMethod.test(block.text)) {
      const k = lines.findIndex((l) => INNER_RESULT.test(l));
      if (k >= 0) {
        const own = lines[k]!.slice(0, lines[k]!.indexOf("//")).trim();
        const stmt =
          own !== "" ? own : (lines.slice(0, k).findLast((l) => l.trim() !== "" && !isComment(l)) ?? "").trim();
        // A result of another function's call (`first(x) // => 1` in `last`'s docs) is that function's.
        const others = [...stmt.matchAll(/(?<![\w$.])([\w$]+)\s*\(/g)].filter(
          (m) => !["console", "if", "for", "while", "switch", "catch", "return", "function"].includes(m[1]!),
        );
        const via = [...scope.viaLocal].find(([n]) =>
          new RegExp(`(?<![\\w$.])${n.replace(/\$/g, "\\$")}\\b`).test(stmt),
        );
        if (others.length === 0)
          skipped.push({
            line: block.line + k,
            code: short(stmt),
            reason:
              `the result it states is of \`${short(stmt, 40)}\`, not of a call of ${method} the test can make` +
              (via
                ? `: \`${via[0]}\` is what the example's own \`${via[1]}\` returned, run as the example times it`
                : ""),
          });
      }
    }

    // A block that calls the function and comments on that call, yet gave neither a case nor a reason: its
    // comments are prose or output no test can write (ASCII art, a remark). Say so, so that every example
    // left out is accounted for.
    if (cases.length + skipped.length === before && callsMethod.test(block.text)) {
      // The call's own line ends in a comment, or a comment line follows it.
      const commented = (k: number): boolean =>
        /\s\/\/\s*\S/.test(lines[k]!) || /^\s*\/\/\s*\S/.test(lines[k + 1] ?? "");
      const k = lines.findIndex((l, n) => callsMethod.test(l) && !isComment(l) && commented(n));
      // Remarks only on other code (`console.log(c.get('id')) // Debug` in a handler the call installs).
      const other = lines.findIndex((l) => callsMethod.test(l) && !isComment(l));
      const elsewhere = lines.some((l) => !isComment(l) && /\s\/\/\s*\S/.test(l) && !INNER_RESULT.test(l));
      if (k >= 0)
        skipped.push({
          line: block.line + k,
          code: short(lines[k]!.trim()),
          reason: `no comment in it states a value of a call of ${method} that a test can write`,
        });
      else if (other >= 0 && elsewhere)
        skipped.push({
          line: block.line + other,
          code: short(lines[other]!.trim()),
          reason: `its comments are on other code than the call of ${method}: none states the call's result`,
        });
    }

    /** One statement: declarations join the scope; a call with a stated result becomes a case. */
    function read(st: TS.Statement, trailing: string[], below: string[], line: number): void {
      const src = st.getSourceFile();
      if (ts.isImportDeclaration(st)) return importOf(st);
      if (ts.isImportEqualsDeclaration(st)) {
        const ref = st.moduleReference;
        if (ts.isExternalModuleReference(ref) && ts.isStringLiteral(ref.expression))
          bind(st.name.text, ref.expression.text, "default");
        else if (st.name.text !== rootOf(as)) scope.foreign.set(st.name.text, ref.getText(src));
        return;
      }
      let target: { call: TS.Expression; awaited: boolean } | { name: string } | undefined;
      let logged = false;
      if (ts.isFunctionDeclaration(st) && st.name && st.body) {
        const needs = [...freeNames(st)].filter((n) => !GLOBALS.has(n) && n !== rootOf(as));
        scope.local.add(st.name.text);
        if (callsCallee(st, true)) scope.wrappers.add(st.name.text);
        if (needs.every(known))
          scope.decls.set(st.name.text, { text: rewriteText(st, src), needs: [...needs, st.name.text] });
        insideFunction(st, src, line);
        return;
      }
      if (ts.isVariableStatement(st)) {
        for (const d of st.declarationList.declarations) {
          if (!d.initializer) continue;
          const names = new Set<string>();
          bindingNames(d.name, names);
          const init = unwrap(d.initializer);
          // `const x = require('m')`, `const {a} = require('m')`: an import.
          const req = init.e;
          if (
            ts.isCallExpression(req) &&
            ts.isIdentifier(req.expression) &&
            req.expression.text === "require" &&
            req.arguments.length === 1 &&
            ts.isStringLiteral(req.arguments[0]!)
          ) {
            const spec = req.arguments[0].text;
            if (ts.isIdentifier(d.name)) bind(d.name.text, spec, "default");
            else if (ts.isObjectBindingPattern(d.name))
              for (const el of d.name.elements)
                if (ts.isIdentifier(el.name) && !el.dotDotDotToken)
                  bind(el.name.text, spec, el.propertyName?.getText(src) ?? el.name.text);
            continue;
          }
          const rewritten = rewrite(d.initializer, src);
          const needs = [...freeNames(rewritten.node)].filter((n) => !GLOBALS.has(n) && n !== rootOf(as));
          const kw = st.declarationList.flags & ts.NodeFlags.Const ? "const" : "let";
          const declText = `${kw} ${d.name.getText(src)} = ${rewritten.text};`;
          for (const n of names) scope.local.add(n);
          const wrapped =
            ts.isCallExpression(init.e) &&
            ts.isIdentifier(init.e.expression) &&
            scope.wrappers.has(init.e.expression.text)
              ? init.e.expression.text
              : undefined;
          for (const n of names) {
            if (wrapped !== undefined) scope.viaLocal.set(n, wrapped);
            else scope.viaLocal.delete(n);
          }
          if (needs.every(known))
            for (const n of names) scope.decls.set(n, { text: declText, needs: [...needs, ...names] });
          else for (const n of names) scope.decls.delete(n);
          if (ts.isIdentifier(d.name) && ts.isCallExpression(init.e) && isCallee(init.e.expression)) {
            scope.results.set(d.name.text, {
              call: callText(init.e, src),
              awaited: init.awaited,
              needs,
              steps: scope.steps,
            });
            if (st.declarationList.declarations.length === 1) target = { call: init.e, awaited: init.awaited };
          } else {
            if (ts.isIdentifier(d.name)) scope.results.delete(d.name.text);
            // `const {a} = f(x)`, `const n = r.length`: what the block computes from the call's result.
            const fromResult = callsCallee(d.initializer) || [...freeNames(d.initializer)].some((n) => fromCall(n));
            for (const n of names) {
              if (fromResult) scope.derived.add(n);
              else scope.derived.delete(n);
            }
          }
        }
      } else if (ts.isExpressionStatement(st)) {
        let e = unwrap(st.expression);
        if (
          ts.isCallExpression(e.e) &&
          // `console(x)` cannot run (console is no function): followed by a result, it can only mean printing x.
          /^console(\.(log|info|debug))?$/.test(e.e.expression.getText(src)) &&
          e.e.arguments.length === 1
        ) {
          logged = true;
          e = unwrap(e.e.arguments[0]!);
        }
        const promised = promiseOf(e.e, src, line);
        if (promised === "read") return;
        if (promised !== undefined) {
          target = { call: promised, awaited: true };
          logged = true;
        } else if (ts.isCallExpression(e.e) && isCallee(e.e.expression)) target = { call: e.e, awaited: e.awaited };
        else if (ts.isIdentifier(e.e) && scope.results.has(e.e.text)) target = { name: e.e.text };
        // A call of what the function returned: `const once = onetime(f); once() //=> 1`.
        else if (ts.isCallExpression(e.e) && ts.isIdentifier(e.e.expression) && scope.results.has(e.e.expression.text))
          target = { call: e.e, awaited: e.awaited };
        // What the block computed from the call's result: `const r = f(x); r.a // => 1`, `n // => 2`.
        else if (
          !(ts.isBinaryExpression(e.e) && isAssignment(e.e.operatorToken.kind)) &&
          [...freeNames(e.e)].some((n) => fromCall(n)) &&
          [...freeNames(e.e)].every((n) => GLOBALS.has(n) || known(n))
        )
          target = { call: e.e, awaited: e.awaited };
        // What the function did to its arguments: `mimic(to, from); to.name //=> "from"`.
        else if (
          !(ts.isBinaryExpression(e.e) && isAssignment(e.e.operatorToken.kind)) &&
          [...freeNames(e.e)].some((n) => scope.affected.has(n))
        )
          target = { call: e.e, awaited: e.awaited };
        else if (!logged && ts.isCallExpression(e.e) && ts.isPropertyAccessExpression(e.e.expression)) {
          // `expect(f(x)).toBe(v)` written in the example itself.
          const m = e.e.expression.name.text;
          const inner = e.e.expression.expression;
          if (
            (m === "toBe" || m === "toEqual" || m === "toStrictEqual") &&
            e.e.arguments.length === 1 &&
            ts.isCallExpression(inner) &&
            inner.expression.getText(src) === "expect" &&
            inner.arguments.length === 1
          ) {
            const subject = unwrap(inner.arguments[0]!);
            if (ts.isCallExpression(subject.e) && isCallee(subject.e.expression)) {
              const call = subject.e;
              const value = e.e.arguments[0]!.getText(src);
              const sub = { call: callText(call, src), awaited: subject.awaited, needs: callNeeds(call, src) };
              addCase(sub, { kind: "value", value, marked: true }, line, st, m === "toBe" ? "toBe" : "toEqual");
            }
            return;
          }
          // `assert.deepStrictEqual(f(x), v)` (node:assert) written in the example itself.
          const asserted = /^(?:strict|deep|deepStrict)?Equal$/i.exec(m);
          if (asserted && /^assert(\.strict)?$/.test(inner.getText(src)) && e.e.arguments.length >= 2) {
            const subject = unwrap(e.e.arguments[0]!);
            if (ts.isCallExpression(subject.e) && isCallee(subject.e.expression)) {
              const call = subject.e;
              const value = e.e.arguments[1]!.getText(src);
              const sub = { call: callText(call, src), awaited: subject.awaited, needs: callNeeds(call, src) };
              addCase(sub, { kind: "value", value, marked: true }, line, st, /^deep/i.test(m) ? "toEqual" : undefined);
              return;
            }
          }
        }
        // An expression around the call: `ansiRegex().test("cake") //=> false`, `"a".match(re()) //=> […]`.
        if (
          !target &&
          !(ts.isBinaryExpression(e.e) && isAssignment(e.e.operatorToken.kind)) &&
          !/^expect\(/.test(e.e.getText(src)) &&
          callsCallee(e.e)
        )
          target = { call: e.e, awaited: e.awaited };
      }
      const first = trailing.find((c) => c !== "") ?? below[0];
      // A statement that changes the block's state (`foo.x = 1;`, `once();`, `f(a, b);`) is repeated
      // before the assertions that read that state later.
      const calledReturned =
        target !== undefined &&
        "call" in target &&
        ts.isCallExpression(target.call) &&
        ts.isIdentifier(target.call.expression) &&
        scope.results.has(target.call.expression.text);
      const later = ts.isExpressionStatement(st) && calledReturned;
      if (ts.isExpressionStatement(st) && (!target || first === undefined)) step(st, src);
      if (!target && ts.isForOfStatement(st) && iterated(st, src, line)) return;
      if (!target) return insideFunction(st, src, line);
      const rest = trailing.some((c) => c !== "") ? below : below.slice(1);
      if (first === undefined) return;
      // A plain call, `console.log`, or a name bound to the call: a bare value after it is its result.
      let s = stated(first, rest, logged);
      // A remark on the call's own line, the result on the next: `f(x) // with defaults` / `// => 3`.
      if (s.kind === "value" && !expression(s.value) && trailing.length > 0 && below.length > 0)
        s = stated(below[0]!, below.slice(1), logged);
      const subject =
        "call" in target
          ? { call: callText(target.call, src), awaited: target.awaited, needs: callNeeds(target.call, src) }
          : resultOf(target.name);
      addCase(subject, s, line, st);
      // After its own case: `foo(); //=> 1` changes what the next `foo()` returns.
      if (later) step(st as TS.ExpressionStatement, src);
    }

    function addCase(
      subject: { call: string; awaited: boolean; needs: string[] },
      s: Stated,
      line: number,
      st: TS.Statement,
      matcher?: ExampleCase["matcher"],
    ): void {
      const code = short(st.getText());
      if (s.promised) subject = { ...subject, awaited: true };
      if (s.iterated && !subject.awaited) subject = { ...subject, call: `[...${subject.call}]` };
      // `process` is no name a test has of the example: what the call reads of it says more.
      const proc = PROCESS_STATE.exec(subject.call);
      if (proc)
        return void skipped.push({
          line,
          code,
          reason: `it reads \`process.${proc[1]}\`: the result depends on the environment the example ran in`,
        });
      const missing = subject.needs.filter((n) => !known(n));
      if (s.kind === "throws") {
        if (missing.length > 0) return void skipped.push({ line, code, reason: missingReason(missing) });
        const setup = setupOf(subject.needs);
        const env = environmentReason([subject.call, ...(setup.setup ?? [])], "");
        if (env !== undefined) return void skipped.push({ line, code, reason: env });
        const key = `${subject.call} throws`;
        if (seen.has(key)) return;
        seen.add(key);
        cases.push({
          call: lazyStreams(subject.call),
          expected: s.thrown !== undefined && BUILTIN_ERRORS.has(s.thrown) ? s.thrown : "",
          matcher: "toThrow",
          line,
          ...confinedSetup(setup),
          ...(subject.awaited ? { awaited: true } : {}),
        });
        return;
      }
      // An unquoted word of a function that returns a string: the string as the comment shows it.
      const word = s.value.trim();
      if (
        opts.returns !== undefined &&
        /^(?:string|Promise<string>)$/.test(opts.returns.replace(/\s+/g, "").replace(/\|(?:undefined|null)\b/g, "")) &&
        /^[^\s'"`[{(]\S*$/.test(word) &&
        // Text has a letter or a digit: `,,))))));,` is a line of ASCII art.
        /[\p{L}\p{N}]/u.test(word) &&
        !/^(?:undefined|null)$/.test(word)
      ) {
        // A name of the block (`expected`) stays a reference; anything else (`10/4/2019`, `a-b`, `42`) is text.
        const p = expression(word);
        const reference = p !== undefined && ts.isIdentifier(p.e) && known(p.e.text);
        if (!reference) s = { ...s, value: JSON.stringify(word), marked: true };
      }
      const parsed = expression(s.value);
      const valueNeeds = parsed ? [...freeNames(parsed.e)].filter((n) => !GLOBALS.has(n)) : [];
      const valueMissing = valueNeeds.filter((n) => !known(n));
      if (!parsed || valueMissing.length > 0 || callsUnknown(parsed.e)) {
        // Prose after a plain call (`f(x) // does the thing`) is not a stated result; a marked one is reported.
        if (s.marked)
          skipped.push({
            line,
            code,
            reason: `the stated result \`${short(s.value, 40)}\` is not a value a test can write down (a literal, or data of literals)`,
          });
        return;
      }
      if (missing.length > 0) return void skipped.push({ line, code, reason: missingReason(missing) });
      const symbol = freshSymbol(parsed.e);
      if (symbol !== undefined)
        return void skipped.push({
          line,
          code,
          reason: `the stated result makes a new symbol (\`${short(symbol, 30)}\`): no result is equal to it`,
        });
      const value = rawEscapes(s.value);
      const setup = setupOf([...subject.needs, ...valueNeeds]);
      const env = environmentReason([subject.call, ...(setup.setup ?? [])], value);
      if (env !== undefined) return void skipped.push({ line, code, reason: env });
      const key = `${subject.call} ${value}`;
      if (seen.has(key)) return;
      seen.add(key);
      const m = matcher ?? matcherFor(expression(value)?.e ?? parsed.e);
      cases.push({
        call: matchArray(lazyStreams(subject.call), parsed.e),
        expected: value,
        matcher: m,
        line,
        ...confinedSetup(setup),
        ...(subject.awaited ? { awaited: true } : {}),
      });
    }

    /**
     * Why the stated result is the author's environment rather than the function's (the example runs as a
     * command line, reads the process's state, names a path of the author's machine or files the example
     * says are on disk), or what the example does to the file system or names that the test cannot do;
     * undefined when the test can make the call here.
     */
    function environmentReason(texts: string[], value: string): string | undefined {
      if (opts.environment !== undefined)
        return `its result depends on the environment: the function reads ${opts.environment}, and the example states the author's`;
      // `once(() => Math.random())`: the example's own draw.
      const draw = texts.map((t) => RANDOM.exec(t)?.[0]).find((r) => r !== undefined);
      if (draw !== undefined)
        return `its result depends on the environment: the example draws a random value (\`${draw}\`), and states the author's draw`;
      const command = COMMAND_LINE.exec(block.text)?.[1];
      if (command !== undefined)
        return `the example runs as the command \`${short(command, 40)}\`: its results depend on that command line`;
      const strings: string[] = [];
      for (const text of texts) {
        const sf = parse(text);
        if (!sf) continue;
        const visit = (n: TS.Node): void => {
          if (fsStream(n)) return;
          if (ts.isCallExpression(n) || ts.isPropertyAccessExpression(n) || ts.isIdentifier(n)) {
            const why = moduleUse(n);
            if (why !== undefined) strings.push(`\0${why}`);
          }
          if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) strings.push(n.text);
          ts.forEachChild(n, visit);
        };
        visit(sf);
      }
      const misuse = strings.find((t) => t.startsWith("\0"));
      if (misuse !== undefined) return misuse.slice(1);
      const stated: string[] = [];
      const literals = (n: TS.Node): void => {
        if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) stated.push(n.text);
        ts.forEachChild(n, literals);
      };
      const v = value === "" ? undefined : parse(value);
      if (v) literals(v);
      const windows = [...strings, ...stated].find((t) => WINDOWS_PATH.test(t));
      if (windows !== undefined && process.platform !== "win32")
        return `it names the Windows path \`${short(windows, 40)}\`: the result depends on the platform, and this is not Windows`;
      const home = stated.map((t) => AUTHOR_HOME.exec(t)?.[1]).find((h) => h !== undefined);
      if (home !== undefined && !strings.some((t) => t.includes(home)))
        return `it states a path under \`${home}\`, a directory of the author's machine`;
      const file = strings.find((t) => FILE_NAME.test(t));
      if (file !== undefined && FILES_SHOWN.test(block.text))
        return `it names \`${short(file, 40)}\`, a file the example has on the author's disk`;
      return undefined;
    }

    /** Why the use of an imported module's member at `n` is not for a test: a name the module lacks, an fs write or read. */
    function moduleUse(n: TS.Node): string | undefined {
      let name: string | undefined;
      let member: string | undefined;
      if (ts.isPropertyAccessExpression(n) && ts.isIdentifier(n.expression) && scope.modules.has(n.expression.text)) {
        if (scope.modules.get(n.expression.text)!.member !== undefined) return undefined;
        name = n.expression.text;
        member = n.name.text;
      } else if (ts.isIdentifier(n) && !isPropertyName(n) && scope.modules.get(n.text)?.member !== undefined) {
        name = n.text;
        member = scope.modules.get(n.text)!.member;
      } else return undefined;
      const spec = scope.modules.get(name)!.spec;
      if (!spec.startsWith("node:") || member === undefined) return undefined;
      const exported = builtinExports(spec) as Record<string, unknown>;
      if (!(member in exported)) return `\`${spec.slice(5)}.${member}\` is not in \`${spec}\` (a typo in the example?)`;
      if (spec === "node:fs" && (ts.isCallExpression(n.parent) ? n.parent.expression === n : false))
        return fsUse(member);
      return undefined;
    }

    /** Whether `n` is `fs.createReadStream(…)` (or the imported `createReadStream(…)`). */
    function fsStream(n: TS.Node): boolean {
      if (!ts.isCallExpression(n)) return false;
      const c = n.expression;
      if (ts.isPropertyAccessExpression(c) && ts.isIdentifier(c.expression))
        return (
          c.name.text === "createReadStream" &&
          scope.modules.get(c.expression.text)?.spec === "node:fs" &&
          scope.modules.get(c.expression.text)?.member === undefined
        );
      return (
        ts.isIdentifier(c) &&
        scope.modules.get(c.text)?.spec === "node:fs" &&
        scope.modules.get(c.text)?.member === "createReadStream"
      );
    }

    /** `text` with each read stream given an error listener: a path this machine lacks fails no run. */
    function lazyStreams(text: string): string {
      const sf = parse(text);
      if (!sf) return text;
      const ends: number[] = [];
      const visit = (n: TS.Node): void => {
        if (fsStream(n)) ends.push(n.end);
        ts.forEachChild(n, visit);
      };
      visit(sf);
      for (const e of ends.sort((a, b) => b - a)) text = `${text.slice(0, e)}.once("error", () => {})${text.slice(e)}`;
      return text;
    }

    function confinedSetup<T extends { setup?: string[] }>(setup: T): T {
      return setup.setup ? { ...setup, setup: setup.setup.map(lazyStreams) } : setup;
    }

    /** Whether `n` holds the callee's result or what the block computed from it. */
    function fromCall(n: string): boolean {
      return scope.results.has(n) || scope.derived.has(n);
    }

    /**
     * A call whose result reaches a callback: `f(x).then((r) => console.log(r)) // v` gives the call to
     * await (its stated comment is the statement's); `f(x).then((r) => { … })` and Node's `f(x, (err, r) =>
     * { … })` have their body read with `r` standing for the awaited result ("read").
     */
    function promiseOf(e: TS.Expression, src: TS.SourceFile, line: number): TS.Expression | "read" | undefined {
      if (!ts.isCallExpression(e)) return undefined;
      const isLog = (x: TS.Node): boolean => /^console\.(log|info|debug)$/.test(x.getText(src));
      const fn = (x: TS.Node | undefined): x is TS.ArrowFunction | TS.FunctionExpression =>
        x !== undefined && (ts.isArrowFunction(x) || ts.isFunctionExpression(x));
      const paramName = (f: TS.SignatureDeclarationBase, i: number): string | undefined => {
        const p = f.parameters[i]?.name;
        return p && ts.isIdentifier(p) ? p.text : undefined;
      };
      if (ts.isPropertyAccessExpression(e.expression) && e.expression.name.text === "then") {
        const inner = unwrap(e.expression.expression).e;
        const cb = e.arguments[0];
        if (!ts.isCallExpression(inner) || !isCallee(inner.expression) || cb === undefined) return undefined;
        if (isLog(cb)) return inner;
        const param = fn(cb) && cb.parameters.length === 1 ? paramName(cb, 0) : undefined;
        if (param === undefined || !fn(cb)) return undefined;
        if (!ts.isBlock(cb.body)) {
          const b = unwrap(cb.body).e;
          const logsParam =
            ts.isCallExpression(b) &&
            isLog(b.expression) &&
            b.arguments.length === 1 &&
            b.arguments[0]!.getText(src) === param;
          return (ts.isIdentifier(b) && b.text === param) || logsParam ? inner : undefined;
        }
        const subject = { call: callText(inner, src), awaited: true, needs: callNeeds(inner, src) };
        return withResult(param, subject, cb.body, src, line);
      }
      const last = e.arguments[e.arguments.length - 1];
      if (!isCallee(e.expression) || !fn(last) || last.parameters.length !== 2 || !ts.isBlock(last.body))
        return undefined;
      const err = paramName(last, 0);
      const param = paramName(last, 1);
      if (err === undefined || !/^(err|error|e)$/i.test(err) || param === undefined) return undefined;
      const args = e.arguments.slice(0, -1).map((a) => rewriteText(a, src));
      const settle = "(err, result) => (err ? reject(err) : resolve(result))";
      const call = `new Promise((resolve, reject) => ${as}(${[...args, settle].join(", ")}))`;
      const parsed = expression(call);
      if (!parsed) return undefined;
      const needs = [...freeNames(parsed.e)].filter((n) => !GLOBALS.has(n) && n !== rootOf(as));
      return withResult(param, { call, awaited: true, needs }, last.body, src, line);
    }

    /** Reads a callback's body with `param` standing for the call's result (a body of comments alone states `param`). */
    function withResult(
      param: string,
      subject: { call: string; awaited: boolean; needs: string[] },
      body: TS.Block,
      src: TS.SourceFile,
      line: number,
    ): "read" {
      const at = src.getLineAndCharacterOfPosition(body.getStart(src)).line;
      const from = src.getLineAndCharacterOfPosition(body.parent.getStart(src)).line;
      const inner = src.text.slice(body.getStart(src) + 1, body.end - 1).split("\n");
      const prev = scope.results.get(param);
      scope.results.set(param, subject);
      readLines(
        body.statements.length === 0
          ? [
              param,
              ...inner.filter((l) => l.trim() !== "").map((l) => l.replace(/^\s*\/\*+\s*(.*?)\s*\*+\/\s*$/, "// $1")),
            ]
          : inner,
        line + at - from,
      );
      if (prev) scope.results.set(param, prev);
      else scope.results.delete(param);
      return "read";
    }

    /**
     * `for (const x of f(a)) { console.log(x); //=> 1 //=> 2 }`: the values the loop prints, one per
     * comment line, are what iterating the result gives (`[...f(a)]`; `for await` collects them first).
     */
    function iterated(st: TS.ForOfStatement, src: TS.SourceFile, line: number): boolean {
      const it = unwrap(st.expression);
      let subject: { call: string; awaited: boolean; needs: string[] } | undefined;
      if (ts.isCallExpression(it.e) && isCallee(it.e.expression))
        subject = { call: callText(it.e, src), awaited: it.awaited, needs: callNeeds(it.e, src) };
      else if (ts.isIdentifier(it.e)) subject = scope.results.get(it.e.text);
      const decl = st.initializer;
      if (!subject || subject.awaited || !ts.isVariableDeclarationList(decl) || decl.declarations.length !== 1)
        return false;
      const v = decl.declarations[0]!.name;
      // The loop only prints: a `break` or any other statement would change what it shows.
      const body = ts.isBlock(st.statement) ? st.statement.statements : [st.statement];
      const only = body.length === 1 ? body[0]! : undefined;
      const printed =
        only !== undefined &&
        ts.isExpressionStatement(only) &&
        ts.isCallExpression(only.expression) &&
        /^console\.(log|info|debug)$/.test(only.expression.expression.getText(src)) &&
        only.expression.arguments.length === 1 &&
        ts.isIdentifier(v) &&
        only.expression.arguments[0]!.getText(src) === v.text;
      if (!printed) return false;
      const lines = src.text.slice(only.getStart(src), st.statement.end).split("\n");
      const comments: string[] = [];
      const own = /\/\/(.*)$/.exec(lines[0]!);
      if (own) comments.push(own[1]!);
      for (let k = 1; k < lines.length && /^\s*\/\//.test(lines[k]!); k++)
        comments.push(lines[k]!.replace(/^\s*\/\/\s?/, ""));
      const values = comments.map((c) => stated(c, [], true));
      if (values.length === 0 || values.some((x) => x.kind !== "value" || !expression(x.value))) return false;
      const call = st.awaitModifier
        ? `(async () => { const all = []; for await (const item of ${subject.call}) all.push(item); return all; })()`
        : `[...${subject.call}]`;
      const value = `[${values.map((x) => x.value).join(", ")}]`;
      addCase(
        { call, awaited: st.awaitModifier !== undefined, needs: subject.needs },
        { kind: "value", value, marked: true },
        line,
        st,
      );
      return true;
    }

    /** `function unicorn() { f() //=> v }`: a result stated inside a function or block of the example is reported. */
    function insideFunction(st: TS.Statement, src: TS.SourceFile, line: number): void {
      const text = st.getText(src);
      if (!INNER_RESULT.test(text) || !callsCallee(st, true)) return;
      // A path of the author's machine in a result the code does not name came from that machine.
      const stated = [...text.matchAll(/\/\/(.*)$/gm)].map((m) => m[1]!).join("\n");
      const home = AUTHOR_HOME.exec(stated)?.[1];
      const code = text.replace(/\/\/.*$/gm, "");
      skipped.push({
        line,
        code: short(text),
        reason:
          home !== undefined && !code.includes(home)
            ? `it states a path under \`${home}\`, a directory of the author's machine`
            : "the call is inside a function or block of the example: its result depends on how that code runs",
      });
    }

    /** A statement over the block's declarations, kept as a step of their setup (see `read`). */
    function step(st: TS.ExpressionStatement, src: TS.SourceFile): void {
      const rewritten = rewrite(st.expression, src);
      const names = [...freeNames(rewritten.node)].filter((n) => !GLOBALS.has(n) && n !== rootOf(as));
      if (names.length === 0 || !names.every(known)) return;
      const key = `#${++scope.steps}`;
      scope.decls.set(key, { text: `${rewritten.text};`, needs: names });
      // An export of the module it names (`identity`) is imported, not declared: nothing to add to.
      for (const n of names) scope.decls.get(n)?.needs.push(key);
      if (callsCallee(st.expression)) for (const n of names) scope.affected.add(n);
    }

    /** An import of the block: a safe Node built-in or a package the workspace has becomes a declaration the test repeats. */
    function importOf(st: TS.ImportDeclaration): void {
      const spec = ts.isStringLiteral(st.moduleSpecifier) ? st.moduleSpecifier.text : "";
      const clause = st.importClause;
      if (!clause || clause.isTypeOnly) return;
      if (clause.name) bind(clause.name.text, spec, "default");
      const nb = clause.namedBindings;
      if (nb && ts.isNamespaceImport(nb)) bind(nb.name.text, spec, "*");
      else if (nb)
        for (const el of nb.elements)
          if (!el.isTypeOnly) bind(el.name.text, spec, el.propertyName?.getText() ?? el.name.text);
    }

    /** `name` bound to `from` of module `spec` ("default", "*" or an export's name), as the test imports it. */
    function bind(name: string, spec: string, from: string): void {
      if (name === rootOf(as)) return;
      const load = loadable(spec);
      if (load === undefined) return void scope.foreign.set(name, spec);
      const imp = `await import(${JSON.stringify(load)})`;
      const text =
        from === "*" ? `const ${name} = ${imp};` : `const { ${from === name ? name : `${from}: ${name}`} } = ${imp};`;
      scope.decls.set(name, { text, needs: [name] });
      scope.modules.set(name, { spec: load, ...(from === "*" || from === "default" ? {} : { member: from }) });
    }

    /** The specifier the test imports `spec` by: a safe built-in (`node:…`), or a package the workspace resolves. */
    function loadable(spec: string): string | undefined {
      const bare = spec.replace(/^node:/, "");
      if (SAFE_BUILTINS.has(bare)) return `node:${bare}`;
      if (builtinModules.includes(bare) || /^[./]/.test(spec) || spec === "") return undefined;
      return opts.resolves?.(spec) ? spec : undefined;
    }

    /** Why `missing` names are not defined: imported from a module the test does not import, or never declared. */
    function missingReason(missing: string[]): string {
      const imported = missing.filter((n) => scope.foreign.has(n));
      if (imported.length === 0) return `it uses ${list(missing)}, which the example does not define`;
      const why = (spec: string): string =>
        /^[./]/.test(spec)
          ? "a file of the author's project"
          : builtinModules.includes(spec.replace(/^node:/, ""))
            ? "a Node built-in with side effects"
            : "a package the workspace does not have";
      return `it uses ${imported.map((n) => `\`${n}\` (from \`${scope.foreign.get(n)}\`, ${why(scope.foreign.get(n)!)})`).join(", ")}, which the test does not import`;
    }

    /** The declarations `names` need, transitively, in the order the block made them. */
    /**
     * The subject of a name bound to the call: the call itself, or, where a later statement changed what
     * the call was given (`const c = clone(a); a.x = 2; c // => …`), the name as the block bound it.
     */
    function resultOf(name: string): { call: string; awaited: boolean; needs: string[] } {
      const r = scope.results.get(name)!;
      const seen = new Set<string>();
      const later = (n: string): boolean => {
        if (seen.has(n)) return false;
        seen.add(n);
        if (n.startsWith("#") && Number(n.slice(1)) > (r.steps ?? Infinity)) return true;
        return (scope.decls.get(n)?.needs ?? []).some(later);
      };
      return r.needs.some(later) && scope.decls.has(name) ? { call: name, awaited: false, needs: [name] } : r;
    }

    function setupOf(names: string[]): { setup?: string[]; asyncSetup?: true; imports?: string[] } {
      const texts = new Set<string>();
      const want = new Set<string>();
      const add = (n: string): void => {
        if (want.has(n)) return;
        want.add(n);
        for (const m of scope.decls.get(n)?.needs ?? []) add(m);
      };
      names.forEach(add);
      const imports = [...want].filter((n) => !scope.decls.has(n) && exported(n)).sort();
      const imported = imports.length > 0 ? { imports } : {};
      // A declaration of several names once; a step (`foo();` three times) as often as the block made it.
      const out: string[] = [];
      for (const [n, d] of scope.decls)
        if (want.has(n) && (n.startsWith("#") || !texts.has(d.text))) {
          texts.add(d.text);
          out.push(d.text);
        }
      if (out.length === 0) return imported;
      return { setup: out, ...(out.some((t) => /\bawait\b/.test(t)) ? { asyncSetup: true } : {}), ...imported };
    }

    function callNeeds(call: TS.Expression, src: TS.SourceFile): string[] {
      const r = rewrite(call, src);
      return [...freeNames(r.node)].filter((n) => !GLOBALS.has(n) && n !== rootOf(as));
    }

    function rewriteText(node: TS.Node, src: TS.SourceFile): string {
      return rewrite(node, src).text;
    }

    function callText(call: TS.Expression, src: TS.SourceFile): string {
      return rewrite(call, src).text;
    }
  }
  return { cases, skipped };

  function callsCallee(e: TS.Node, inFunctions = false): boolean {
    let found = false;
    const visit = (n: TS.Node): void => {
      if (found || (!inFunctions && ts.isFunctionLike(n))) return;
      if (ts.isCallExpression(n) && isCallee(n.expression)) found = true;
      else ts.forEachChild(n, visit);
    };
    visit(e);
    return found;
  }

  function isCallee(e: TS.Expression): boolean {
    if (cls !== undefined)
      return (
        ts.isPropertyAccessExpression(e) &&
        ts.isIdentifier(e.expression) &&
        e.expression.text === cls &&
        e.name.text === method
      );
    if (ts.isIdentifier(e)) return e.text === method;
    // Through a namespace: `_.chunk(…)`, `R.add(…)`, `utils.camelCase(…)`.
    return (
      ts.isPropertyAccessExpression(e) &&
      ts.isIdentifier(e.expression) &&
      e.name.text === method &&
      !GLOBALS.has(e.expression.text)
    );
  }

  /** `node`'s text with every reference to the callee spelled as the test imports it; reparsed. */
  function rewrite(node: TS.Node, src: TS.SourceFile): { text: string; node: TS.Node } {
    const start = node.getStart(src);
    const spans: [number, number, string][] = [];
    const visit = (n: TS.Node): void => {
      if ((ts.isIdentifier(n) || ts.isPropertyAccessExpression(n)) && isCallee(n) && !isPropertyName(n)) {
        spans.push([n.getStart(src) - start, n.end - start, as]);
        return;
      }
      // `R.multiply` beside `R.map`: another export of the module, imported by its name.
      if (
        ts.isPropertyAccessExpression(n) &&
        ts.isIdentifier(n.expression) &&
        namespaces.has(n.expression.text) &&
        opts.exports?.has(n.name.text) === true &&
        n.name.text !== rootOf(as)
      ) {
        spans.push([n.getStart(src) - start, n.end - start, n.name.text]);
        return;
      }
      ts.forEachChild(n, visit);
    };
    visit(node);
    let text = src.text.slice(start, node.end);
    for (const [a, b, by] of spans.reverse()) text = text.slice(0, a) + by + text.slice(b);
    const reparsed = expression(text);
    return { text, node: reparsed?.e ?? node };
  }
}

/** Whether `n` is the name of a property (`x.f`, `{ f: 1 }`), not a reference. */
function isPropertyName(n: TS.Node): boolean {
  const p = n.parent;
  return (
    (ts.isPropertyAccessExpression(p) && p.name === n) ||
    (ts.isPropertyAssignment(p) && p.name === n) ||
    (ts.isMethodDeclaration(p) && p.name === n)
  );
}

function rootOf(as: string): string {
  return as.split(".")[0]!;
}

function list(names: string[]): string {
  return names.map((n) => `\`${n}\``).join(", ");
}

function unwrap(e: TS.Expression): { e: TS.Expression; awaited: boolean } {
  let awaited = false;
  for (;;) {
    if (ts.isParenthesizedExpression(e)) e = e.expression;
    else if (ts.isAwaitExpression(e)) {
      awaited = true;
      e = e.expression;
    } else break;
  }
  return { e, awaited };
}

/** Whether a line of code has a comment (`//` in a string, `"http://x"`, is none). */
function hasComment(line: string): boolean {
  if (!line.includes("//") && !line.includes("/*")) return false;
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, line);
  for (let k = scanner.scan(); k !== ts.SyntaxKind.EndOfFileToken; k = scanner.scan())
    if (k === ts.SyntaxKind.SingleLineCommentTrivia || k === ts.SyntaxKind.MultiLineCommentTrivia) return true;
  return false;
}

function lineIn(st: TS.Statement): number {
  const sf = st.getSourceFile();
  return sf.getLineAndCharacterOfPosition(st.getStart(sf)).line;
}

/** The assertions an `@example` block states for calls of `callee` (`fn` or `Class.fn` for a static method). */
export function exampleCases(commentValue: string, callee: string, opts: ExampleOptions = {}): ExampleCase[] {
  return readExamples(commentValue, callee, opts).cases;
}

/** The statements of one case: the block's declarations it needs, then the assertion (vitest/jest, or node:assert). */
export function assertionFor(c: ExampleCase, framework: "vitest" | "jest" | "node:test", awaited: boolean): string {
  const wait = awaited || c.awaited === true;
  const call = wait ? `await ${c.call}` : c.call;
  const setup = (c.setup ?? []).map((s) => `${s}\n`).join("");
  if (c.matcher === "toThrow") {
    const cls = c.expected;
    if (framework === "node:test")
      return `${setup}${wait ? `await assert.rejects(${c.call}` : `assert.throws(() => ${c.call}`}${cls ? `, ${cls}` : ""});`;
    return `${setup}${wait ? `await expect(${c.call}).rejects` : `expect(() => ${c.call})`}.toThrow(${cls});`;
  }
  if (framework === "node:test") {
    switch (c.matcher) {
      case "toBeUndefined":
        return `${setup}assert.equal(${call}, undefined);`;
      case "toBeNull":
        return `${setup}assert.equal(${call}, null);`;
      case "toBeNaN":
        return `${setup}assert.ok(Number.isNaN(${call}));`;
      case "toEqual":
        return `${setup}assert.deepStrictEqual(${call}, ${c.expected});`;
      default:
        return `${setup}assert.equal(${call}, ${c.expected});`;
    }
  }
  const arg = c.matcher === "toBe" || c.matcher === "toEqual" ? c.expected : "";
  return `${setup}expect(${call}).${c.matcher}(${arg});`;
}

/** Whether a package (`p`, `@s/p`, `p/sub`) is installed in the workspace's node_modules, where its tests resolve it. */
export function workspaceResolves(root: string | undefined): (spec: string) => boolean {
  return (spec) => {
    const name = /^(@[^/]+\/[^/]+|[^/@.][^/]*)/.exec(spec)?.[1];
    return root !== undefined && name !== undefined && existsSync(join(root, "node_modules", name, "package.json"));
  };
}

/** Examples shown in the notes as not converted, at most (the rest are counted). */
const MAX_SKIPPED_NOTES = 5;

/**
 * The example cases of a target's doc comment, spelled with the name the test imports (`exported`),
 * and notes for the examples that stated a result but could not become an assertion.
 */
export function readDocExamples(
  doc: string | undefined,
  sig: { name: string; class?: string; returns?: string },
  isMethod: boolean,
  isStatic: boolean,
  exported: string | undefined,
  opts: Omit<ExampleOptions, "as"> = {},
): { cases: ExampleCase[]; skipped: SkippedExample[]; notes: string[] } {
  if (doc === undefined) return { cases: [], skipped: [], notes: [] };
  const callee = isMethod ? `${sig.class}.${sig.name}` : sig.name;
  const as = isMethod ? `${exported ?? sig.class}.${sig.name}` : (exported ?? sig.name);
  const read = readExamples(doc, callee, {
    ...opts,
    as,
    ...(sig.returns !== undefined ? { returns: sig.returns } : {}),
  });
  if (isMethod && !isStatic) {
    // An instance method's examples call it on a receiver the example built: that is not known here.
    const stated = readExamples(doc, sig.name).cases.length;
    return {
      cases: [],
      skipped: [],
      notes:
        stated > 0
          ? [
              `@example of ${sig.class}.${sig.name} not asserted: the receiver of an instance method's example is not known`,
            ]
          : [],
    };
  }
  const notes = read.skipped
    .slice(0, MAX_SKIPPED_NOTES)
    .map((s) => `@example (doc line ${s.line}) \`${s.code}\` not asserted: ${s.reason}`);
  if (read.skipped.length > MAX_SKIPPED_NOTES)
    notes.push(`${read.skipped.length - MAX_SKIPPED_NOTES} more @example lines not asserted`);
  return { ...read, notes };
}

function isAssignment(k: TS.SyntaxKind): boolean {
  return k >= ts.SyntaxKind.FirstAssignment && k <= ts.SyntaxKind.LastAssignment;
}
