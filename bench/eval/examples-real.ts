/**
 * testgen's @example reading measured on real JSDoc (docs/agents.md, "testgen", evaluation): the
 * published declaration files of the small single-purpose packages installed in this checkout's
 * node_modules (pretty-ms, pretty-bytes, strip-ansi, string-width, filenamify, …), written by their
 * authors, not for this eval. For each exported function whose @example states a result (judged here
 * by a result comment or a printed call, independently of examples.ts), the share that gets at least
 * one assertion from it; then the assertions are run with vitest against the packages' real code
 * (pass % says the assertions are right, not just present).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import ts from "typescript";
import { environmentOf } from "../../agents/testgen/effects.js";
import { assertionFor, exampleBlocks, readDocExamples, workspaceResolves } from "../../agents/testgen/examples.js";
import { dialectOf } from "../../agents/lib/code/language.js";
import { parseFile, type Node, type Program } from "../../agents/lib/code/parse.js";
import { walk } from "../../agents/lib/code/walk.js";

/** This checkout (the eval runs from dist/bench/eval): its vitest runs the assertions. */
const CHECKOUT = fileURLToPath(new URL("../../../", import.meta.url));

/** Declaration files larger than this are frameworks, not single-purpose packages: left out. */
const MAX_DTS_BYTES = 40_000;
/**
 * The judgement before this one, kept to show what it counted: any result-looking comment anywhere in
 * the example (a property's `// 50kb`, a bullet `// - foo.js`, `// Output of …` prose) or any comment
 * after a `console.log`, whatever it printed.
 */
const STATES_LOOSE =
  /\/\/\s*(=>|→|->|returns?\b|result|output|prints?\b|["'\d[{-]|`[^`]*`\s*$|true\b|false\b|null\b|undefined\b)|console\.log\(.*\n\s*\/\/|console\.log\(.*\/\/\s*\S/im;

/**
 * A comment that states a value: `=> v`, `→ v`, `returns v`, `result …`, `prints "v"`, `output: v`,
 * `x is v`, a literal (a string, a number, an array, an object, true/false/null/undefined), or a lone
 * code span. Prose (`// Debug`, `// Print the output`, `// - foo.js` bullets) is not.
 */
const VALUE_COMMENT =
  /^\s*(?:=+>|→|->|returns?\b|results?\b|(?:prints?|outputs?|logs?)\s*(?::\s*\S|["'`\d[{])|(?:[\w$.]+\s+)?(?:will be|would be|is|equals|===?)\s+["'`\d[{-]|["'\d[{]|-\s*\d|`[^`]*`\s*$|(?:true|false|null|undefined|NaN|-?Infinity)\b)/i;
/** A comment below a printed value that heads the next line instead (`// Output of \`cmd\``): a sentence. */
const HEADING = /^[A-Z][a-z]+(?:\s+\S+){2,}/;

/**
 * Whether an example block states a result of `name` (judged here, independently of examples.ts): a
 * statement that uses a call of it, or a value that flows from one (a variable it initialises, a loop
 * over it, a callback it is given, a local function that calls it), carries a comment that states a
 * value on its line or on the comment lines right below; a printed value's comment counts unless it is
 * a sentence that heads the next line. Comments on other code (an option's `// 50kb`, a handler's
 * `console.log(c.get('id')) // Debug`) state nothing of the function.
 */
export function statesResult(block: string, name: string): boolean {
  const sf = ts.createSourceFile("e.ts", block, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const text = sf.text;
  const esc = name.replace(/[$.]/g, "\\$&");
  // Directly or through the module as a namespace (`R.map(…)`, `_.chunk(…)`; not `arr.map(…)`).
  const call = new RegExp(`(?<![\\w$.])(?:[A-Z_$][\\w$]*\\.)?${esc}\\s*(?:<[^>]*>)?\\s*[(\x60]`);
  const derived = new Set<string>();
  const mentions = (n: ts.Node): boolean => {
    if (call.test(n.getText(sf))) return true;
    let hit = false;
    const visit = (k: ts.Node): void => {
      if (hit) return;
      if (
        ts.isIdentifier(k) &&
        derived.has(k.text) &&
        !(ts.isPropertyAccessExpression(k.parent) && k.parent.name === k)
      )
        hit = true;
      else ts.forEachChild(k, visit);
    };
    visit(n);
    return hit;
  };
  const bind = (b: ts.Node): void => {
    if (ts.isIdentifier(b)) derived.add(b.text);
    else ts.forEachChild(b, bind);
  };
  // What flows from a call, to a fixed point.
  for (let size = -1; size !== derived.size;) {
    size = derived.size;
    const visit = (n: ts.Node): void => {
      if (ts.isVariableDeclaration(n) && n.initializer && mentions(n.initializer)) bind(n.name);
      else if ((ts.isForOfStatement(n) || ts.isForInStatement(n)) && mentions(n.expression)) bind(n.initializer);
      else if (ts.isFunctionDeclaration(n) && n.name && n.body && mentions(n.body)) derived.add(n.name.text);
      else if (
        ts.isBinaryExpression(n) &&
        n.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
        ts.isIdentifier(n.left) &&
        mentions(n.right)
      )
        derived.add(n.left.text);
      else if (ts.isCallExpression(n) && (n.expression.getText(sf) === name || mentions(n.expression)))
        // A callback the call is given: its parameters, and what it assigns; a name it is given (it may change it).
        for (const a of n.arguments)
          if (ts.isIdentifier(a)) derived.add(a.text);
          else if (ts.isArrowFunction(a) || ts.isFunctionExpression(a)) {
            for (const p of a.parameters) bind(p.name);
            const assigned = (k: ts.Node): void => {
              if (
                ts.isBinaryExpression(k) &&
                k.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
                ts.isIdentifier(k.left)
              )
                derived.add(k.left.text);
              ts.forEachChild(k, assigned);
            };
            assigned(a.body);
          }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  const lines = text.split("\n");
  let states = false;
  const visit = (n: ts.Node): void => {
    if (states) return;
    const leaf = ts.isExpressionStatement(n) || ts.isVariableStatement(n) || ts.isReturnStatement(n);
    if (leaf && mentions(n)) {
      const e = ts.isExpressionStatement(n) ? n.expression : undefined;
      const printed =
        e !== undefined && ts.isCallExpression(e) && /^console\.(?:log|info|dir)$/.test(e.expression.getText(sf));
      const trailing = (ts.getTrailingCommentRanges(text, n.end) ?? []).map((r) =>
        text.slice(r.pos, r.end).replace(/^\/\/\s?|^\/\*+|\*+\/$/g, ""),
      );
      const last = sf.getLineAndCharacterOfPosition(n.end).line;
      const below: string[] = [];
      let k = last + 1;
      for (; k < lines.length && /^\s*\/\//.test(lines[k]!); k++) below.push(lines[k]!.replace(/^\s*\/\/\s?/, ""));
      const nextIsCode = k < lines.length && lines[k]!.trim() !== "" && !/^\s*[})\]]/.test(lines[k]!);
      // Comment lines right above that open their lines (`// Returns [0, 1]` / `range(2);`).
      const first = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line;
      const above: string[] = [];
      let a = first - 1;
      for (; a >= 0 && /^\s*\/\//.test(lines[a]!); a--) above.unshift(lines[a]!.replace(/^\s*\/\/\s?/, ""));
      const opens = a < 0 || lines[a]!.trim() === "";
      if (trailing.some((c) => VALUE_COMMENT.test(c) || (printed && c.trim() !== ""))) states = true;
      else if (above.length > 0 && opens && VALUE_COMMENT.test(above[0]!)) states = true;
      else if (
        below.length > 0 &&
        (VALUE_COMMENT.test(below[0]!) || (printed && !(nextIsCode && HEADING.test(below[0]!))))
      )
        states = true;
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return states;
}

/** Reasons that say a stated result is the author's environment (see examples.ts `environmentReason`). */
const ENVIRONMENT = /author's|command line|depends on the environment/;

interface Fn {
  pkg: string;
  name: string;
  importLine: string;
  /** Whether an example states a result of it (`statesResult`). */
  states: boolean;
  /** The same by the looser judgement before (`STATES_LOOSE`), reported beside it. */
  statesLoose: boolean;
  cases: string[];
  skipped: string[];
  /** Other exports of the package its examples use without importing them: the test imports them too. */
  imports: string[];
}

/** What the declaration file exports at run time (functions, classes, enums, variables; not types). */
function runtimeExports(sf: ts.SourceFile): Set<string> {
  const out = new Set<string>();
  for (const st of sf.statements) {
    const mods = ts.canHaveModifiers(st) ? (ts.getModifiers(st) ?? []) : [];
    if (!mods.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) {
      if (ts.isExportDeclaration(st) && !st.isTypeOnly && st.exportClause && ts.isNamedExports(st.exportClause))
        for (const e of st.exportClause.elements) if (!e.isTypeOnly) out.add(e.name.text);
      continue;
    }
    if (mods.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword)) continue;
    if ((ts.isFunctionDeclaration(st) || ts.isClassDeclaration(st) || ts.isEnumDeclaration(st)) && st.name)
      out.add(st.name.text);
    else if (ts.isVariableStatement(st))
      for (const d of st.declarationList.declarations) if (ts.isIdentifier(d.name)) out.add(d.name.text);
  }
  return out;
}

/** The import line of a function's test: the function (default or named) and the other exports its cases use. */
function importLineOf(pkg: string, local: string, imported: string | undefined, others: string[]): string {
  const named = [
    ...(imported === undefined ? [] : [imported === local ? local : `${imported} as ${local}`]),
    ...others,
  ];
  const parts = [...(imported === undefined ? [local] : []), ...(named.length > 0 ? [`{ ${named.join(", ")} }`] : [])];
  return `import ${parts.join(", ")} from "${pkg}";`;
}

function dtsOf(dir: string): string | undefined {
  try {
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { types?: string; typings?: string };
    const rel = pkg.types ?? pkg.typings ?? "index.d.ts";
    const p = join(dir, rel);
    return existsSync(p) && statSync(p).isFile() && /\.d\.[cm]?ts$/.test(p) ? p : undefined;
  } catch {
    return undefined;
  }
}

/** The package's main JavaScript file (its `exports` for Node's import, or `main`), parsed. */
function mainProgram(dir: string): Program | undefined {
  try {
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { exports?: unknown; main?: string };
    const pick = (x: unknown): string | undefined => {
      if (typeof x === "string") return x;
      if (!x || typeof x !== "object") return undefined;
      const o = x as Record<string, unknown>;
      return pick(o["."] ?? o.node ?? o.import ?? o.default ?? o.require);
    };
    const rel = pick(pkg.exports) ?? pkg.main ?? "index.js";
    const file = [join(dir, rel), `${join(dir, rel)}.js`, join(dir, rel, "index.js")].find(
      (f) => existsSync(f) && statSync(f).isFile(),
    );
    if (!file) return undefined;
    return parseFile(readFileSync(file, "utf8"), dialectOf("javascript", file), file).program;
  } catch {
    return undefined;
  }
}

/** The JavaScript file a declaration file describes (`shuffle-x.d.ts` → `shuffle-x.js`), parsed: a package of one file per function. */
function siblingProgram(dts: string): Program | undefined {
  const file = [".js", ".mjs", ".cjs"].map((e) => dts.replace(/\.d\.[cm]?ts$/, e)).find((f) => existsSync(f));
  if (!file) return undefined;
  try {
    const program = parseFile(readFileSync(file, "utf8"), dialectOf("javascript", file), file).program;
    // A bundle's entry re-exports: its main file has the code then.
    return program.body.some((n) => n.type === "FunctionDeclaration" || n.type === "VariableDeclaration")
      ? program
      : undefined;
  } catch {
    return undefined;
  }
}

/** What the function `name` of the package's code reads of its environment (the whole file where the name is not found). */
function environmentIn(program: Program | undefined, name: string): string | undefined {
  if (!program) return undefined;
  let fn: Node | undefined;
  walk(program, (n) => {
    if (fn) return false;
    if (n.type === "FunctionDeclaration" && n.id?.name === name) fn = n;
    else if (n.type === "VariableDeclarator" && n.id.type === "Identifier" && n.id.name === name && n.init) fn = n.init;
    return true;
  });
  return environmentOf(fn ?? program, program);
}

/** Exported functions with @example of one declaration file. */
function functionsOf(pkg: string, file: string, root: string, code: Program | undefined, rootKeys?: Set<string>): Fn[] {
  const text = readFileSync(file, "utf8");
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const exports = new Set([...runtimeExports(sf), ...(rootKeys ?? [])]);
  const defaults = new Set<string>();
  // A bundled declaration file declares its functions and exports them in one list at the end.
  const listed = new Set<string>();
  for (const st of sf.statements) {
    if (ts.isExportAssignment(st) && ts.isIdentifier(st.expression)) defaults.add(st.expression.text);
    if (ts.isExportDeclaration(st) && !st.isTypeOnly && !st.moduleSpecifier && st.exportClause)
      if (ts.isNamedExports(st.exportClause))
        for (const e of st.exportClause.elements)
          if (!e.isTypeOnly && (e.propertyName ?? e.name).getText(sf) === e.name.text) listed.add(e.name.text);
  }
  const out: Fn[] = [];
  for (const st of sf.statements) {
    let name: string | undefined;
    let isDefault = false;
    const mods = ts.canHaveModifiers(st) ? (ts.getModifiers(st) ?? []) : [];
    const exported = mods.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    const dflt = mods.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword);
    if (ts.isFunctionDeclaration(st) && st.name) {
      name = st.name.text;
      isDefault = dflt || defaults.has(name);
      if (!exported && !isDefault && !listed.has(name)) continue;
    } else if (ts.isVariableStatement(st) && st.declarationList.declarations.length === 1) {
      const d = st.declarationList.declarations[0]!;
      if (!ts.isIdentifier(d.name)) continue;
      name = d.name.text;
      isDefault = defaults.has(name);
      if (!exported && !isDefault && !listed.has(name)) continue;
    } else continue;
    // `declare const f: { /** doc */ (x): T; m(y): U }` (older typings): the call signature is `f`, members `f.m`.
    const literal =
      ts.isVariableStatement(st) && st.declarationList.declarations[0]!.type !== undefined
        ? st.declarationList.declarations[0]!.type
        : undefined;
    if (literal && ts.isTypeLiteralNode(literal)) {
      for (const m of literal.members) {
        const method = ts.isMethodSignature(m) && ts.isIdentifier(m.name) ? m.name.text : undefined;
        if (!ts.isCallSignatureDeclaration(m) && method === undefined) continue;
        const fn = documented(pkg, name, isDefault, m, sf, method, root, code, exports);
        if (fn && !out.some((f) => f.name === fn.name)) out.push(fn);
      }
      continue;
    }
    const docs = ts.getJSDocCommentsAndTags(st).filter(ts.isJSDoc);
    // Overloads repeat the name: the first documented one counts.
    if (out.some((f) => f.name === name)) continue;
    for (const doc of docs) {
      const raw = doc.getText(sf);
      if (!raw.includes("@example")) continue;
      const value = raw.replace(/^\/\*/, "").replace(/\*\/$/, "");
      const exampleText = (ts.getJSDocTags(st) ?? [])
        .filter((t) => t.tagName.text === "example")
        .map((t) => (typeof t.comment === "string" ? t.comment : (ts.getTextOfJSDocComment(t.comment) ?? "")))
        .join("\n");
      const environment = environmentIn(code, name);
      // The declared return type, as testgen has it from the function's signature.
      const returns = ts.isFunctionDeclaration(st) ? st.type?.getText(sf) : undefined;
      const read = readDocExamples(value, { name, ...(returns !== undefined ? { returns } : {}) }, false, false, name, {
        resolves: workspaceResolves(root),
        exports,
        ...(environment !== undefined ? { environment } : {}),
      });
      const imports = [...new Set(read.cases.flatMap((c) => c.imports ?? []))].sort();
      out.push({
        pkg,
        name,
        importLine: importLineOf(pkg, name, isDefault ? undefined : name, imports),
        imports,
        states: exampleBlocks(value).some((b) => statesResult(b.text, name)),
        statesLoose: STATES_LOOSE.test(exampleText) && exampleText.includes(`${name}(`),
        cases: read.cases.map((c) => assertionFor(c, "vitest", false)),
        skipped: read.skipped.map((s) => `${s.code}: ${s.reason}`),
      });
      break;
    }
  }
  return out;
}

/** A type literal's member with an @example, read as the example imports the package (its own local name). */
function documented(
  pkg: string,
  declared: string,
  isDefault: boolean,
  m: ts.TypeElement,
  sf: ts.SourceFile,
  method: string | undefined,
  root: string,
  code: Program | undefined,
  exports: Set<string>,
): Fn | undefined {
  const doc = ts.getJSDocCommentsAndTags(m).find((d) => ts.isJSDoc(d) && d.getText(sf).includes("@example"));
  if (!doc) return undefined;
  const raw = doc.getText(sf);
  const value = raw.replace(/^\/\*/, "").replace(/\*\/$/, "");
  const esc = pkg.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
  const local =
    new RegExp(`import\\s+([\\w$]+)\\s*(?:=\\s*require\\(|from)\\s*['"]${esc}['"]`).exec(value)?.[1] ?? declared;
  const name = method === undefined ? local : `${local}.${method}`;
  const environment = environmentIn(code, method ?? declared);
  const opts = { resolves: workspaceResolves(root), exports, ...(environment !== undefined ? { environment } : {}) };
  const read =
    method === undefined
      ? readDocExamples(value, { name: local }, false, false, local, opts)
      : readDocExamples(value, { name: method, class: local }, true, true, local, opts);
  const exampleText = value.slice(value.indexOf("@example"));
  const imports = [...new Set(read.cases.flatMap((c) => c.imports ?? []))].sort();
  return {
    pkg,
    name,
    importLine: importLineOf(pkg, local, isDefault ? undefined : declared, imports),
    imports,
    states: exampleBlocks(value).some((b) => statesResult(b.text, name)),
    statesLoose: STATES_LOOSE.test(exampleText) && exampleText.includes(`${name}(`),
    cases: read.cases.map((c) => assertionFor(c, "vitest", false)),
    skipped: read.skipped.map((s) => `${s.code}: ${s.reason}`),
  };
}

/** Declaration files under `dir` (not its nested node_modules), at most `maxBytes`, with an @example. */
function declarationsWithExamples(dir: string, maxBytes: number): string[] {
  const out: string[] = [];
  const visit = (d: string, depth: number): void => {
    if (depth > 4) return;
    for (const n of readdirSync(d).sort()) {
      if (n === "node_modules" || n.startsWith(".")) continue;
      const p = join(d, n);
      const st = statSync(p);
      if (st.isDirectory()) visit(p, depth + 1);
      else if (/\.d\.[cm]?ts$/.test(n) && st.size <= maxBytes && readFileSync(p, "utf8").includes("@example"))
        out.push(p);
    }
  };
  visit(dir, 0);
  return out;
}

/**
 * The packages read: `main`, the entry declaration file of each unscoped package; `held-out`, what main
 * leaves out (scoped packages, and the other declaration files of every package), imported from the
 * package's root where its code exports the function.
 */
function sources(
  modules: string,
  set: "main" | "held-out",
  only?: string[],
): { pkg: string; dir: string; dts: string }[] {
  const out: { pkg: string; dir: string; dts: string }[] = [];
  const names = readdirSync(modules)
    .sort()
    .flatMap((n) =>
      n.startsWith("@") && statSync(join(modules, n)).isDirectory()
        ? readdirSync(join(modules, n)).map((m) => `${n}/${m}`)
        : [n],
    );
  for (const name of names) {
    if (name.startsWith(".") || name.startsWith("@types/")) continue;
    const dir = join(modules, name);
    if (!statSync(dir).isDirectory()) continue;
    const dts = dtsOf(dir);
    const main =
      !name.startsWith("@") &&
      dts !== undefined &&
      statSync(dts).size <= MAX_DTS_BYTES &&
      readFileSync(dts, "utf8").includes("@example");
    if (set === "main") {
      if (main) out.push({ pkg: name, dir, dts: dts! });
      continue;
    }
    // A library studied on its own (`only`) is read whole, its entry file included, however large (a
    // utility library bundles all its functions in one declaration file).
    for (const f of declarationsWithExamples(dir, only ? Infinity : MAX_DTS_BYTES))
      if (!(main && f === dts && !only)) out.push({ pkg: name, dir, dts: f });
  }
  // A library studied on its own (`only`: folders under node_modules): its declaration files there.
  return only ? out.filter((s) => only.some((o) => s.dts.startsWith(`${join(modules, o)}/`))) : out;
}

/** The names each package's root module exports, loaded by Node from `root` as a test there would. */
async function rootExports(root: string, pkgs: string[]): Promise<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>();
  for (const pkg of pkgs) {
    const run = await execa(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `const m = await import(${JSON.stringify(pkg)}); console.log(JSON.stringify(Object.keys(m)))`,
      ],
      { cwd: root, reject: false, timeout: 60_000 },
    );
    try {
      out.set(pkg, new Set(JSON.parse(run.stdout) as string[]));
    } catch {
      out.set(pkg, new Set());
    }
  }
  return out;
}

/** Whether the package's code exports what `importLine` imports (a held-out declaration file may describe an inner module). */
function importable(keys: Set<string> | undefined, importLine: string): boolean {
  if (!keys) return false;
  const named =
    /\{ ([^}]+) \}/
      .exec(importLine)?.[1]
      ?.split(", ")
      .map((n) => n.split(" as ")[0]!) ?? [];
  const isDefault = !/^import \{/.test(importLine);
  return (!isDefault || keys.has("default")) && named.every((n) => keys.has(n));
}

export async function evalRealExamples(
  rootIn: string,
  set: "main" | "held-out" = "main",
  only?: string[],
): Promise<Record<string, unknown>> {
  // vitest runs with the temp dir as its cwd: every path below is absolute.
  const root = resolve(rootIn);
  const modules = join(root, "node_modules");
  let fns: Fn[] = [];
  const srcs = sources(modules, set, only);
  // What each package's root exports: the tests import from there, so an example may use any of it.
  const keys = set === "held-out" ? await rootExports(root, [...new Set(srcs.map((s) => s.pkg))]) : undefined;
  for (const s of srcs)
    fns.push(...functionsOf(s.pkg, s.dts, root, siblingProgram(s.dts) ?? mainProgram(s.dir), keys?.get(s.pkg)));
  // The same function read from two declaration files (a package's .d.ts and .d.cts) counts once.
  fns = fns.filter((f, i) => fns.findIndex((g) => g.pkg === f.pkg && g.name === f.name) === i);
  const unimportable = new Set<Fn>();
  if (keys)
    for (const f of fns) if (f.cases.length > 0 && !importable(keys.get(f.pkg), f.importLine)) unimportable.add(f);
  const stating = fns.filter((f) => f.states);
  const asserted = stating.filter((f) => f.cases.length > 0);
  // Run the assertions against the packages' own code, one file per function.
  // One folder per run: two runs (two builds side by side) may share a root.
  const tmp = join(root, "bench", `.examples-real-tmp-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const results: Record<string, { passed: number; failed: number; failures: string[] }> = {};
  try {
    writeFileSync(join(tmp, "vitest.config.mjs"), 'export default { test: { include: ["*.test.ts"] } };\n');
    const files: string[] = [];
    for (const f of fns.filter((x) => x.cases.length > 0 && !unimportable.has(x))) {
      // TypeScript: examples annotate their declarations (`(x: number) => …`, `new Map<string, number>()`).
      const file = `${f.pkg.replace("/", "+")}--${f.name}.test.ts`;
      const body = f.cases.map((c, i) => `  it(${JSON.stringify(`example ${i + 1}`)}, async () => {\n${c}\n  });`);
      writeFileSync(
        join(tmp, file),
        `import { describe, expect, it } from "vitest";\n${f.importLine}\n\ndescribe(${JSON.stringify(`${f.pkg} ${f.name}`)}, () => {\n${body.join("\n")}\n});\n`,
      );
      files.push(file);
    }
    const report = join(tmp, "report.json");
    // A library of hundreds of functions (EVAL_EXAMPLES_ISOLATE=0: its files share one module graph, loaded
    // once; EVAL_EXAMPLES_TIMEOUT_S: the run's bound, 600 s by default).
    const isolate = process.env.EVAL_EXAMPLES_ISOLATE === "0" ? ["--no-isolate"] : [];
    const run = await execa(
      join(CHECKOUT, "node_modules", ".bin", "vitest"),
      [
        "run",
        "--root",
        tmp,
        "--config",
        join(tmp, "vitest.config.mjs"),
        "--reporter=json",
        `--outputFile=${report}`,
        ...isolate,
      ],
      {
        cwd: tmp,
        reject: false,
        timeout: 1000 * Number(process.env.EVAL_EXAMPLES_TIMEOUT_S ?? 600),
        env: { CI: "1" },
      },
    );
    const rep = existsSync(report)
      ? (JSON.parse(readFileSync(report, "utf8")) as {
          testResults: {
            name: string;
            message?: string;
            assertionResults: { status: string; failureMessages?: string[] }[];
          }[];
        })
      : { testResults: [] };
    if (!existsSync(report))
      throw new Error(
        `vitest wrote no report: ${String(run.exitCode)} ${run.stdout} ${run.stderr} ${run.message ?? ""}`.slice(
          0,
          2000,
        ),
      );
    for (const r of rep.testResults) {
      const key = r.name
        .split("/")
        .pop()!
        .replace(/\.test\.ts$/, "");
      const failures = r.assertionResults
        .filter((a) => a.status === "failed")
        .map((a) => (a.failureMessages?.[0] ?? "").split("\n")[0]!.slice(0, 160));
      if (r.assertionResults.length === 0 && r.message) failures.push(r.message.split("\n")[0]!.slice(0, 160));
      results[key] = {
        passed: r.assertionResults.filter((a) => a.status === "passed").length,
        failed: r.assertionResults.length - r.assertionResults.filter((a) => a.status === "passed").length,
        failures,
      };
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const passed = Object.values(results).reduce((n, r) => n + r.passed, 0);
  const failed = Object.values(results).reduce((n, r) => n + r.failed, 0);
  const pct = (a: number, b: number): number | null => (b === 0 ? null : Math.round((1000 * a) / b) / 10);
  return {
    packages: [...new Set(fns.map((f) => f.pkg))],
    functions_with_examples: fns.length,
    functions_stating_a_result: stating.length,
    stating_asserted: asserted.length,
    stating_asserted_pct: pct(asserted.length, stating.length),
    // The looser judgement before (any result-looking comment in the example), and what it counted that this one does not.
    stating_loose: fns.filter((f) => f.statesLoose).length,
    stating_loose_asserted: fns.filter((f) => f.statesLoose && f.cases.length > 0).length,
    judged_differently: fns
      .filter((f) => f.states !== f.statesLoose)
      .map((f) => `${f.pkg} ${f.name}: ${f.states ? "states a result (loose: no)" : "states none (loose: yes)"}`),
    // Stating functions whose examples all state the author's environment (a path, a command line, a terminal).
    stating_environment: stating.filter(
      (f) => f.cases.length === 0 && f.skipped.length > 0 && f.skipped.every((x) => ENVIRONMENT.test(x)),
    ).length,
    assertions: fns.reduce((n, f) => n + f.cases.length, 0),
    ...(set === "held-out"
      ? { not_run: [...unimportable].map((f) => `${f.pkg} ${f.name}: the package's code does not export it`) }
      : {}),
    assertions_passed: passed,
    assertions_pass_pct: pct(passed, passed + failed),
    not_asserted: stating
      .filter((f) => f.cases.length === 0)
      .map((f) => `${f.pkg} ${f.name}${f.skipped.length ? `: ${f.skipped[0]}` : ""}`),
    failures: Object.entries(results).flatMap(([k, r]) => r.failures.map((f) => `${k}: ${f}`)),
    skipped_examples: fns.flatMap((f) => f.skipped.map((s) => `${f.pkg} ${f.name}: ${s}`)).slice(0, 40),
  };
}
