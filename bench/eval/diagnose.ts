/**
 * The diagnose agent's evaluation (`npm run eval:code -- diagnose`, docs/agents.md "diagnose"):
 *
 * - injected errors: in copies of the corpus's source files, at random places, a misspelled identifier,
 *   a removed import, a wrong argument count, a missing property, a wrong argument type, a removed
 *   `return`; per error: a diagnosis at the right line, a verified fix that leaves the file as clean as
 *   the original (applied and checked again here, apart from the agent's own check), verified fixes
 *   that leave an error, and the anchor: the share that TypeScript's own quick fixes resolve;
 * - real failures: in a copy of a corpus library, a test's expected value changed or an error thrown
 *   deep in the library, the test run with this checkout's vitest, its output diagnosed: the cause
 *   frame at the right file and line; and the same through a build with source maps (node on dist/);
 * - speed: the diagnostics of a warm 2,000-line file, each request a changed buffer.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import ts from "typescript";
import { WorkspaceService } from "../../agents/lib/code/service.js";
import { diagnoseFile, unusedExpressions, type CheckedFix } from "../../agents/lib/diagnose/check.js";
import { createDiagnose } from "../../agents/diagnose/handler.js";
import { TypedEngine } from "../../agents/lib/completion/engine.js";
import { standaloneContext } from "../../agents/lib/runtime/context.js";
import { createLogger } from "../../protocol/util/log.js";
import type { AipRequest } from "../../protocol/contract/schemas.js";
import { percentileOf } from "../../protocol/util/percentile.js";
import { rng } from "../lib/rng.js";

export interface Project {
  name: string;
  root: string;
  files: string[];
}

type Kind = "misspelled" | "removed-import" | "arg-count" | "missing-property" | "arg-type" | "removed-return";
const KINDS: Kind[] = ["misspelled", "removed-import", "arg-count", "missing-property", "arg-type", "removed-return"];

interface Injection {
  kind: Kind;
  text: string;
  /** Lines (1-based) where the error belongs. */
  lines: Set<number>;
}

const lineOf = (sf: ts.SourceFile, pos: number): number => sf.getLineAndCharacterOfPosition(pos).line + 1;

function all(sf: ts.SourceFile): ts.Node[] {
  const out: ts.Node[] = [];
  const visit = (n: ts.Node): void => {
    out.push(n);
    n.forEachChild(visit);
  };
  visit(sf);
  return out;
}

const replace = (text: string, start: number, end: number, by: string): string =>
  text.slice(0, start) + by + text.slice(end);

/** Candidate injections of `kind` in `text` (each a whole mutated text); the caller samples them. */
function sites(kind: Kind, path: string, text: string): Injection[] {
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const nodes = all(sf);
  const out: Injection[] = [];
  const at = (n: ts.Node) => new Set([lineOf(sf, n.getStart(sf))]);
  if (kind === "misspelled") {
    for (const n of nodes)
      if (
        ts.isIdentifier(n) &&
        n.text.length >= 4 &&
        (ts.isCallExpression(n.parent) ||
          ts.isBinaryExpression(n.parent) ||
          ts.isReturnStatement(n.parent) ||
          (ts.isVariableDeclaration(n.parent) && n.parent.initializer === n)) &&
        !ts.isPropertyAccessExpression(n.parent)
      ) {
        const s = n.text;
        const i = 1 + (s.length % (s.length - 2));
        const typo = s.slice(0, i) + s[i + 1] + s[i] + s.slice(i + 2);
        if (typo !== s) out.push({ kind, text: replace(text, n.getStart(sf), n.getEnd(), typo), lines: at(n) });
      }
  } else if (kind === "removed-import") {
    for (const n of nodes)
      if (
        ts.isImportDeclaration(n) &&
        n.importClause?.namedBindings &&
        ts.isNamedImports(n.importClause.namedBindings)
      ) {
        const els = n.importClause.namedBindings.elements;
        if (n.importClause.isTypeOnly) continue;
        for (const el of els) {
          if (el.isTypeOnly) continue;
          const name = el.name.text;
          const uses = nodes.filter(
            (u) => ts.isIdentifier(u) && u.text === name && u !== el.name && !ts.isImportSpecifier(u.parent),
          );
          if (uses.length === 0) continue;
          const t =
            els.length === 1
              ? replace(text, n.getStart(sf), n.getEnd(), "")
              : replace(
                  text,
                  el.getStart(sf),
                  el === els.at(-1) ? el.getEnd() : els[els.indexOf(el) + 1]!.getStart(sf),
                  "",
                ).replace(/,\s*}/, " }");
          out.push({
            kind,
            text: t,
            lines: new Set(uses.map((u) => lineOf(sf, u.getStart(sf)) - (els.length === 1 ? 0 : 0))),
          });
        }
      }
    // Removing a whole import line moves every later line up by one (or more).
    for (const inj of out) {
      const shift = text.split("\n").length - inj.text.split("\n").length;
      if (shift > 0) inj.lines = new Set([...inj.lines].map((l) => l - shift));
    }
  } else if (kind === "arg-count") {
    for (const n of nodes)
      if (ts.isCallExpression(n) && n.arguments.length > 0 && ts.isIdentifier(n.expression)) {
        const last = n.arguments.at(-1)!;
        const span = new Set<number>();
        for (let l = lineOf(sf, n.getStart(sf)); l <= lineOf(sf, n.getEnd()); l++) span.add(l);
        if (n.arguments.length % 2 === 0) {
          const from = n.arguments.length === 1 ? n.arguments.pos : n.arguments[n.arguments.length - 2]!.end;
          out.push({ kind, text: replace(text, from, last.getEnd(), ""), lines: span });
        } else
          out.push({ kind, text: replace(text, last.getEnd(), last.getEnd(), `, ${last.getText(sf)}`), lines: span });
      }
  } else if (kind === "missing-property") {
    for (const n of nodes)
      if (ts.isPropertyAssignment(n) && ts.isObjectLiteralExpression(n.parent) && n.parent.properties.length > 1) {
        const i = n.parent.properties.indexOf(n);
        const end = i < n.parent.properties.length - 1 ? n.parent.properties[i + 1]!.getStart(sf) : n.getEnd();
        let stmt: ts.Node = n.parent;
        while (stmt.parent && !ts.isStatement(stmt) && !ts.isSourceFile(stmt.parent)) stmt = stmt.parent;
        const lines = new Set<number>();
        for (let l = lineOf(sf, stmt.getStart(sf)); l <= lineOf(sf, n.parent.getEnd()); l++) lines.add(l);
        out.push({ kind, text: replace(text, n.getStart(sf), end, ""), lines });
      }
  } else if (kind === "arg-type") {
    for (const n of nodes)
      if (ts.isCallExpression(n))
        for (const a of n.arguments) {
          const by = ts.isStringLiteral(a)
            ? "0"
            : ts.isNumericLiteral(a)
              ? '"0"'
              : a.kind === ts.SyntaxKind.TrueKeyword || a.kind === ts.SyntaxKind.FalseKeyword
                ? '"yes"'
                : undefined;
          if (by !== undefined) out.push({ kind, text: replace(text, a.getStart(sf), a.getEnd(), by), lines: at(a) });
        }
  } else {
    for (const n of nodes)
      if (ts.isReturnStatement(n) && n.expression) {
        let fn: ts.Node | undefined = n.parent;
        while (fn && !ts.isFunctionLike(fn)) fn = fn.parent;
        if (!fn) continue;
        const lines = at(n);
        // TypeScript reports a missing return at the function's return type.
        const f = fn as ts.FunctionLikeDeclaration;
        // Without a declared return type the loss shows only where the value is used: not counted.
        if (!f.type) continue;
        lines.add(lineOf(sf, f.type.getStart(sf)));
        lines.add(lineOf(sf, fn.getStart(sf)));
        out.push({ kind, text: replace(text, n.getStart(sf), n.expression.getStart(sf), ""), lines });
      }
  }
  return out;
}

/** The file's errors as `TS<code>: <message>` with their spans, sorted by key. */
function located(svc: WorkspaceService, path: string): { key: string; start: number; end: number }[] {
  const ls = svc.languageService;
  return [...ls.getSyntacticDiagnostics(path), ...ls.getSemanticDiagnostics(path)]
    .filter((d) => d.category === ts.DiagnosticCategory.Error)
    .map((d) => ({
      key: `TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`,
      start: d.start ?? 0,
      end: (d.start ?? 0) + (d.length ?? 0),
    }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.start - b.start));
}

const errorsOf = (svc: WorkspaceService, path: string): string[] => located(svc, path).map((e) => e.key);

function offsets(text: string): (p: { line: number; column: number }) => number {
  const starts = [0];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return (p) => starts[p.line - 1]! + p.column;
}

/** Where the offset of `at` in `text` is after `fix`'s edits (an edit over it moves it to the edit's start). */
function offsetAfter(text: string, fix: CheckedFix, path: string, at: { line: number; column: number }): number {
  const off = offsets(text);
  const o = off(at);
  let moved = o;
  for (const e of fix.edits) {
    if (e.file !== path) continue;
    const s = off(e.start);
    const en = off(e.end);
    if (en <= o) moved += e.new_text.length - (en - s);
    else if (s <= o) moved = Math.min(moved, s);
  }
  return moved;
}

function apply(text: string, fix: CheckedFix, path: string): string | undefined {
  if (fix.edits.some((e) => e.file !== path)) return undefined;
  const off = offsets(text);
  let out = text;
  for (const e of [...fix.edits].sort((a, b) => off(b.start) - off(a.start)))
    out = replace(out, off(e.start), off(e.end), e.new_text);
  return out;
}

/** A copy of a corpus project with the types it names (@types/node) copied in: the reader does not follow links out of a workspace. */
export function copyProject(p: Project, modules: string): string {
  const dir = mkdtempSync(join(tmpdir(), `aip-diag-${p.name}-`));
  cpSync(p.root, dir, { recursive: true, filter: (s) => !s.includes("node_modules") });
  for (const pkg of ["@types/node", "undici-types"])
    cpSync(join(modules, pkg), join(dir, "node_modules", pkg), { recursive: true });
  return dir;
}

async function injected(ps: Project[], modules: string, perKind: number): Promise<Record<string, unknown>> {
  const rand = rng(34);
  const byKind: Record<
    string,
    {
      n: number;
      located: number;
      fixed: number;
      original: number;
      ts_fixed: number;
      verified_with_error: number;
      verified_elsewhere: number;
      top_fixed: number;
      no_error: number;
    }
  > = {};
  for (const k of KINDS)
    byKind[k] = {
      n: 0,
      located: 0,
      fixed: 0,
      original: 0,
      ts_fixed: 0,
      verified_with_error: 0,
      verified_elsewhere: 0,
      top_fixed: 0,
      no_error: 0,
    };
  const misses: string[] = [];
  const fixMisses: string[] = [];
  const verifiedLeaving: string[] = [];
  for (const p of ps) {
    const dir = copyProject(p, modules);
    const svc = new WorkspaceService(dir);
    await svc.loaded;
    if (svc.state !== "ready") throw new Error(`${p.name}: ${svc.fallback.join("; ")}`);
    for (const kind of KINDS) {
      const pool: { file: string; inj: Injection }[] = [];
      for (const f of p.files) {
        const path = join(dir, f);
        for (const inj of sites(kind, path, readFileSync(path, "utf8"))) pool.push({ file: f, inj });
      }
      let taken = 0;
      while (taken < perKind && pool.length > 0) {
        const { file, inj } = pool.splice(Math.floor(rand() * pool.length), 1)[0]!;
        const path = join(dir, file);
        const original = readFileSync(path, "utf8");
        svc.update(path, original);
        const base = errorsOf(svc, path);
        svc.update(path, inj.text);
        const after = errorsOf(svc, path);
        if (after.length <= base.length) {
          byKind[kind]!.no_error++;
          continue;
        }
        taken++;
        const s = byKind[kind]!;
        s.n++;
        const a = diagnoseFile(svc, { path, text: inj.text, deadline: Date.now() + 60_000 });
        const baseSet = new Set(base);
        // The agent's own rule on the original too: what it reported there is not new.
        const osf = ts.createSourceFile(path, original, ts.ScriptTarget.Latest, true);
        let ownBefore = unusedExpressions(
          osf,
          (osf as unknown as { parseDiagnostics: ts.Diagnostic[] }).parseDiagnostics,
        ).length;
        const fresh = a.diagnostics.filter((d) =>
          d.rule !== undefined ? ownBefore-- <= 0 : !baseSet.has(`TS${d.code}: ${d.message}`),
        );
        const here = fresh.filter((d) => inj.lines.has(d.start.line));
        if (here.length > 0) s.located++;
        else
          misses.push(
            `${p.name}/${file} ${kind}: expected line ${[...inj.lines].join("/")}, got ${fresh.map((d) => `${d.start.line} TS${d.code}`).join(", ")}`,
          );
        // Every fix applied here and checked again, apart from the agent's own check: clean (the
        // original's errors exactly), an error left at the diagnostic itself (a wrong "verified"), or
        // errors left elsewhere only (another error the injection caused, which this fix does not claim).
        // The errors covering a diagnostic's place besides itself (an extra argument's error around
        // one of its parameters' errors): the diagnostic's fix need not remove them.
        svc.update(path, inj.text);
        const injErrors = located(svc, path);
        const startOf = offsets(inj.text);
        const check = (
          fix: CheckedFix,
          at: { line: number; column: number },
          self: string,
        ): "clean" | "here" | "elsewhere" | undefined => {
          const from = startOf(at);
          const kept = injErrors.filter((x) => x.start <= from && from <= x.end).map((x) => x.key);
          if (kept.includes(self)) kept.splice(kept.indexOf(self), 1);
          const t = apply(inj.text, fix, path);
          if (t === undefined) return undefined;
          svc.update(path, t);
          const e = located(svc, path);
          if (e.length === base.length && e.every((x, i) => x.key === base[i])) return "clean";
          const pool = new Map<string, number>();
          for (const k of base) pool.set(k, (pool.get(k) ?? 0) + 1);
          const o = offsetAfter(inj.text, fix, path, at);
          for (const x of e) {
            const n = pool.get(x.key) ?? 0;
            if (n > 0) pool.set(x.key, n - 1);
            else if (x.start <= o && o <= x.end) {
              const i = kept.indexOf(x.key);
              if (i < 0) return "here";
              kept.splice(i, 1);
            }
          }
          return "elsewhere";
        };
        let fixed = false;
        let tsFixed = false;
        let topDone = false;
        for (const d of fresh) {
          for (const fix of d.fixes) {
            const r = check(fix, d.start, `TS${d.code}: ${d.message}`);
            const ok = r === "clean";
            if (fix.verified && r === "here") {
              s.verified_with_error++;
              verifiedLeaving.push(
                `${p.name}/${file} ${kind} line ${d.start.line} TS${d.code}: ${fix.fix_name} "${fix.description}"`,
              );
            }
            if (fix.verified && r === "elsewhere") s.verified_elsewhere++;
            if (fix.verified && ok) {
              fixed = true;
              if (!topDone && apply(inj.text, fix, path) === original) s.original++;
            }
            if (fix.source === "typescript" && ok && !/disable|ignore/i.test(fix.fix_name)) tsFixed = true;
          }
          if (!topDone && d.fixes[0]?.verified) {
            topDone = true;
            if (check(d.fixes[0], d.start, `TS${d.code}: ${d.message}`) === "clean") s.top_fixed++;
          }
        }
        if (!fixed)
          fixMisses.push(
            `${p.name}/${file} ${kind} line ${[...inj.lines].join("/")}: ${
              fresh
                .slice(0, 3)
                .map(
                  (d) =>
                    `${d.start.line} TS${d.code} [${d.fixes
                      .slice(0, 4)
                      .map((f) => `${f.fix_name}${f.verified ? "+" : `- ${(f.not_verified ?? "").slice(0, 80)}`}`)
                      .join("; ")}]`,
                )
                .join(", ") || "no new diagnostic"
            }`,
          );
        if (fixed) s.fixed++;
        if (tsFixed) s.ts_fixed++;
        svc.update(path, original);
      }
    }
    svc.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
  const total = Object.values(byKind).reduce(
    (t, s) => ({
      n: t.n + s.n,
      located: t.located + s.located,
      fixed: t.fixed + s.fixed,
      ts_fixed: t.ts_fixed + s.ts_fixed,
      verified_with_error: t.verified_with_error + s.verified_with_error,
      verified_elsewhere: t.verified_elsewhere + s.verified_elsewhere,
      original: t.original + s.original,
      top_fixed: t.top_fixed + s.top_fixed,
    }),
    {
      n: 0,
      located: 0,
      fixed: 0,
      ts_fixed: 0,
      verified_with_error: 0,
      verified_elsewhere: 0,
      original: 0,
      top_fixed: 0,
    },
  );
  const pct = (a: number, b: number) => (b === 0 ? 0 : Math.round((1000 * a) / b) / 10);
  return {
    errors: total.n,
    located_pct: pct(total.located, total.n),
    verified_fix_restores_clean_pct: pct(total.fixed, total.n),
    top_fix_restores_clean_pct: pct(total.top_fixed, total.n),
    a_verified_fix_restores_original_text_pct: pct(total.original, total.n),
    typescript_quick_fixes_restore_clean_pct: pct(total.ts_fixed, total.n),
    // A fix marked verified whose checked copy still has an error at the diagnostic's line: must be 0.
    verified_fixes_leaving_an_error: total.verified_with_error,
    // Verified fixes that resolve their diagnostic while another error the injection caused stays
    // elsewhere in the file (a second use of a misspelled name): reported apart, not counted as wrong.
    verified_fixes_leaving_other_errors_elsewhere: total.verified_elsewhere,
    by_kind: Object.fromEntries(
      Object.entries(byKind).map(([k, s]) => [
        k,
        {
          errors: s.n,
          located_pct: pct(s.located, s.n),
          verified_fix_pct: pct(s.fixed, s.n),
          typescript_pct: pct(s.ts_fixed, s.n),
          injections_without_error_skipped: s.no_error,
        },
      ]),
    ),
    location_misses: misses.slice(0, 20),
    fix_misses: fixMisses.slice(0, 40),
    verified_fixes_leaving_an_error_list: verifiedLeaving.slice(0, 20),
  };
}

const silent = createLogger({ agentName: "eval", destination: false });
const ctx = () => standaloneContext({ traceId: "eval", budgetMs: 120_000, log: silent });

/** Real failures: a copy of a library, its test made to fail, run with this checkout's vitest, and through a build with source maps. */
async function failures(ps: Project[], repo: string, perLib: number): Promise<Record<string, unknown>> {
  const rand = rng(3434);
  const engine = new TypedEngine();
  const handler = createDiagnose(engine);
  const results = { vitest: { n: 0, right: 0 }, built: { n: 0, right: 0 } };
  const misses: string[] = [];
  const vitest = join(repo, "node_modules/vitest/vitest.mjs");
  const libs = ps.filter((p) => p.name === "scule" || p.name === "defu" || p.name === "hookable");
  const diagnose = async (root: string, output: string) =>
    (await handler(
      {
        action: "diagnose",
        context: { workspace_root: root, output },
        constraints: { check_wait_ms: 60_000 },
      } as AipRequest,
      ctx(),
    )) as {
      cause?: { file_path: string; line: number };
    };
  for (const p of libs) {
    const dir = mkdtempSync(join(tmpdir(), `aip-fail-${p.name}-`));
    cpSync(p.root, dir, { recursive: true });
    symlinkSync(join(repo, "node_modules"), join(dir, "node_modules"));
    const tests = execFileSync("ls", [join(dir, "test")])
      .toString()
      .split("\n")
      .filter((f) => /\.test\.ts$/.test(f) && !/types|bundle/.test(f));
    const mutations: { file: string; text: string; line: number; test: string }[] = [];
    for (const t of tests) {
      const text = readFileSync(join(dir, "test", t), "utf8");
      const sf = ts.createSourceFile(t, text, ts.ScriptTarget.Latest, true);
      for (const n of all(sf))
        if (
          ts.isCallExpression(n) &&
          ts.isPropertyAccessExpression(n.expression) &&
          /^to(?:Be|Equal|StrictEqual)$/.test(n.expression.name.text)
        ) {
          const a = n.arguments[0];
          if (a && (ts.isStringLiteral(a) || ts.isNumericLiteral(a)))
            mutations.push({
              file: `test/${t}`,
              text: replace(text, a.getStart(sf), a.getEnd(), ts.isStringLiteral(a) ? '"changed"' : "424242"),
              line: lineOf(sf, n.getStart(sf)),
              test: t,
            });
        }
    }
    for (const f of p.files) {
      const text = readFileSync(join(dir, f), "utf8");
      const sf = ts.createSourceFile(f, text, ts.ScriptTarget.Latest, true);
      for (const n of all(sf))
        if (
          ts.isFunctionLike(n) &&
          (n as ts.FunctionLikeDeclaration).body &&
          ts.isBlock((n as ts.FunctionLikeDeclaration).body!)
        ) {
          const body = (n as ts.FunctionLikeDeclaration).body as ts.Block;
          const first = body.statements[0];
          if (!first) continue;
          const at = first.getStart(sf);
          for (const t of tests)
            mutations.push({
              file: f,
              text: replace(text, at, at, 'throw new Error("injected");\n'),
              line: lineOf(sf, at),
              test: t,
            });
        }
    }
    let done = 0;
    while (done < perLib && mutations.length > 0) {
      const m = mutations.splice(Math.floor(rand() * mutations.length), 1)[0]!;
      const original = readFileSync(join(dir, m.file), "utf8");
      writeFileSync(join(dir, m.file), m.text);
      const run = spawnSync(
        process.execPath,
        [vitest, "run", `test/${m.test}`, "--root", dir, "--reporter", "default", "--no-color"],
        {
          cwd: dir,
          encoding: "utf8",
          timeout: 120_000,
          env: { ...process.env, NO_COLOR: "1", CI: "1" },
        },
      );
      writeFileSync(join(dir, m.file), original);
      const out = `${run.stdout}\n${run.stderr}`;
      if (run.status === 0 || !/FAIL/.test(out)) continue;
      done++;
      results.vitest.n++;
      const a = await diagnose(dir, out);
      if (a.cause?.file_path === m.file && a.cause.line === m.line) results.vitest.right++;
      else
        misses.push(
          `vitest ${p.name} ${m.file}:${m.line}: got ${a.cause ? `${a.cause.file_path}:${a.cause.line}` : "no cause"}`,
        );
    }
    rmSync(dir, { recursive: true, force: true });
  }
  // Through a build: scule compiled with source maps, a function made to throw, called from node on dist/.
  const scule = ps.find((p) => p.name === "scule");
  if (scule) {
    const dir = mkdtempSync(join(tmpdir(), "aip-built-scule-"));
    cpSync(scule.root, dir, { recursive: true });
    const src = readFileSync(join(dir, "src/index.ts"), "utf8");
    const sf = ts.createSourceFile("index.ts", src, ts.ScriptTarget.Latest, true);
    const bodies = all(sf).filter(
      (n) => ts.isFunctionDeclaration(n) && n.body && n.body.statements.length > 0,
    ) as ts.FunctionDeclaration[];
    const exported = bodies
      .filter((n) => n.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword))
      .map((n) => n.name!.text);
    const tsc = join(repo, "node_modules/typescript/bin/tsc");
    for (const fn of bodies.sort(() => rand() - 0.5).slice(0, perLib)) {
      const at = fn.body!.statements[0]!.getStart(sf);
      writeFileSync(join(dir, "src/index.ts"), replace(src, at, at, 'throw new Error("injected");\n'));
      rmSync(join(dir, "dist"), { recursive: true, force: true });
      spawnSync(process.execPath, [
        tsc,
        "--outDir",
        join(dir, "dist"),
        "--sourceMap",
        "--module",
        "commonjs",
        "--target",
        "es2022",
        "--skipLibCheck",
        "--noCheck",
        join(dir, "src/index.ts"),
      ]);
      writeFileSync(join(dir, "dist/package.json"), '{ "type": "commonjs" }\n');
      const driver = `const m = require(${JSON.stringify(join(dir, "dist/index.js"))});\nfor (const name of ${JSON.stringify(exported)}) m[name]("fooBar-baz qux_quux");\n`;
      const run = spawnSync(process.execPath, ["-e", driver], { encoding: "utf8" });
      if (run.status === 0) continue;
      results.built.n++;
      const line = lineOf(sf, at);
      const a = await diagnose(dir, run.stderr);
      if (a.cause?.file_path === "src/index.ts" && a.cause.line === line) results.built.right++;
      else
        misses.push(
          `built scule src/index.ts:${line}: got ${a.cause ? `${a.cause.file_path}:${a.cause.line}` : "no cause"}`,
        );
    }
    rmSync(dir, { recursive: true, force: true });
  }
  await engine.close();
  const pct = (a: number, b: number) => (b === 0 ? 0 : Math.round((1000 * a) / b) / 10);
  const n = results.vitest.n + results.built.n;
  return {
    failures: n,
    cause_right_pct: pct(results.vitest.right + results.built.right, n),
    vitest: { failures: results.vitest.n, cause_right_pct: pct(results.vitest.right, results.vitest.n) },
    built_with_source_maps: { failures: results.built.n, cause_right_pct: pct(results.built.right, results.built.n) },
    misses: misses.slice(0, 20),
  };
}

/**
 * In a copy of scule: its module with its types inlined, repeated in namespaces, written as
 * src/big.ts: a clean file of at least 2,000 lines.
 */
export function writeBigFile(dir: string): { path: string; text: string } {
  const unit = `${readFileSync(join(dir, "src/types.ts"), "utf8")}\n${readFileSync(join(dir, "src/index.ts"), "utf8")}`
    .replace(/^import[^;]*;$/gms, "")
    .replace(/^export \* from .*$/gm, "");
  let big = "";
  for (let i = 0; big.split("\n").length < 2000; i++)
    big += `export namespace N${i} {\n${unit.replace(/export type /g, "type ")}\n}\n`;
  const path = join(dir, "src/big.ts");
  writeFileSync(path, big);
  return { path, text: big };
}

/** The diagnostics of a warm 2,000-line file: each request a changed buffer (a keystroke in a comment). */
async function speed(ps: Project[], modules: string): Promise<Record<string, unknown>> {
  const p = ps.find((x) => x.name === "scule") ?? ps[0]!;
  const dir = copyProject(p, modules);
  const { path, text: big } = writeBigFile(dir);
  const t0 = performance.now();
  const svc = new WorkspaceService(dir);
  await svc.loaded;
  const load = performance.now() - t0;
  const first = performance.now();
  diagnoseFile(svc, { path, text: big, deadline: Date.now() + 60_000 });
  const firstMs = performance.now() - first;
  const ms: number[] = [];
  const diagMs: number[] = [];
  // TypeScript's own check of the same changed buffer, interleaved: the floor under the same load,
  // so the ratio says what the agent adds whatever the machine's load.
  const rawMs: number[] = [];
  const ls = svc.languageService;
  const loads: number[] = [];
  for (let i = 0; i < 40; i++) {
    const text = `${big}// edit ${i}\n`;
    const s = performance.now();
    const a = diagnoseFile(svc, { path, text, deadline: Date.now() + 60_000 });
    ms.push(performance.now() - s);
    diagMs.push(a.ms.diagnostics);
    const r = performance.now();
    svc.update(path, `${big}// raw ${i}\n`);
    ls.getSyntacticDiagnostics(path);
    ls.getSemanticDiagnostics(path);
    rawMs.push(performance.now() - r);
    loads.push(loadavg()[0]!);
  }
  svc.dispose();
  rmSync(dir, { recursive: true, force: true });
  const r = (x: number) => Math.round(x * 10) / 10;
  return {
    file_lines: big.split("\n").length,
    workspace_load_ms: r(load),
    first_diagnosis_ms: r(firstMs),
    warm_changed_buffer_ms: { p50: r(percentileOf(ms, 50)), p95: r(percentileOf(ms, 95)) },
    warm_diagnostics_only_ms: { p50: r(percentileOf(diagMs, 50)), p95: r(percentileOf(diagMs, 95)) },
    typescript_check_same_buffers_ms: { p50: r(percentileOf(rawMs, 50)), p95: r(percentileOf(rawMs, 95)) },
    p95_ratio_to_typescript_check: r(percentileOf(ms, 95) / percentileOf(rawMs, 95)),
    load_average_1m: { min: r(Math.min(...loads)), max: r(Math.max(...loads)) },
  };
}

export async function evalDiagnose(ps: Project[], repo: string): Promise<Record<string, unknown>> {
  const corpus = ps.filter((p) => p.name !== "agency");
  const modules = join(repo, "node_modules");
  mkdirSync(tmpdir(), { recursive: true });
  const perKind = Number(process.env.EVAL_DIAGNOSE_PER_KIND ?? 12);
  // EVAL_DIAGNOSE_SECTIONS=injected,speed: only those sections (a development run).
  const want = process.env.EVAL_DIAGNOSE_SECTIONS?.split(",");
  const on = (s: string) => !want || want.includes(s);
  return {
    ...(on("injected") ? { injected: await injected(corpus, modules, perKind) } : {}),
    ...(on("failures")
      ? { failures: await failures(corpus, repo, Number(process.env.EVAL_DIAGNOSE_FAILURES ?? 12)) }
      : {}),
    ...(on("speed") ? { speed: await speed(corpus, modules) } : {}),
  };
}
