/**
 * `node dist/bench/diagnose-speed.js [OUT.json]`: the diagnose action's speed on a warm 2,000-line file
 * and on a new 200-file workspace, side by side with a bare TypeScript language service doing the same
 * edits in this process (the floor under the same load: the figures to compare are the ratios).
 *
 * Warm file (a copy of scule, src/big.ts from bench/eval/diagnose.ts), through the action's handler and
 * the typed engine's worker, each request interleaved with the bare service's check of the same text
 * (its whole file's check, and its region check as TypeScript's own server makes it after an edit):
 * - `unchanged`: the same text asked again (an editor's re-request, a code-action request);
 * - `comment_edit`: a changed buffer that stays clean (the default: the edited region first);
 * - `error_edit`: a changed buffer with a misspelled local, the region answer (the default), then the
 *   whole file's answer asked for at once (`coverage: "file"`, `full_after_region_ms`);
 * - `error_edit_file`: the whole file asked for after each edit (fixes checked with the default budget),
 *   and with `verify_budget_ms: 0` followed by the re-ask that checks them.
 * New workspace: 200 generated modules, the first answer of a fresh engine and the first checked one.
 */
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { createDiagnose } from "../agents/diagnose/handler.js";
import { TypedEngine } from "../agents/lib/completion/engine.js";
import { standaloneContext } from "../agents/lib/runtime/context.js";
import type { AipRequest } from "../protocol/contract/schemas.js";
import { createLogger } from "../protocol/util/log.js";
import { percentileOf } from "../protocol/util/percentile.js";
import { copyProject, writeBigFile } from "./eval/diagnose.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const CORPUS = resolve(ROOT, "../shared/corpus");
const N = Number(process.env.DIAGNOSE_SPEED_N ?? 20);
const silent = createLogger({ agentName: "bench", destination: false });
const r1 = (x: number) => Math.round(x * 10) / 10;

/** A bare language service over files on disk plus the buffers it is given. */
function bareService(dir: string, options: ts.CompilerOptions, rootNames: string[]) {
  const texts = new Map<string, { text: string; version: number }>();
  let projectVersion = 0;
  const host: ts.LanguageServiceHost = {
    getCompilationSettings: () => options,
    getProjectVersion: () => String(projectVersion),
    getScriptFileNames: () => rootNames,
    getScriptVersion: (p) => String(texts.get(p)?.version ?? 0),
    getScriptSnapshot: (p) => {
      const t = texts.get(p)?.text ?? ts.sys.readFile(p);
      return t === undefined ? undefined : ts.ScriptSnapshot.fromString(t);
    },
    getCurrentDirectory: () => dir,
    getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
    fileExists: (p) => texts.has(p) || ts.sys.fileExists(p),
    readFile: (p) => texts.get(p)?.text ?? ts.sys.readFile(p),
    directoryExists: ts.sys.directoryExists,
    getDirectories: ts.sys.getDirectories,
  };
  const ls = ts.createLanguageService(host, ts.createDocumentRegistry());
  return {
    ls,
    update(path: string, text: string) {
      const old = texts.get(path);
      if (old?.text === text) return;
      texts.set(path, { text, version: (old?.version ?? 0) + 1 });
      projectVersion++;
    },
    /** TypeScript's server after an edit: syntactic, then the semantic diagnostics of the region `range` only. */
    region(path: string, range: ts.TextRange): number {
      const syn = this.ls.getSyntacticDiagnostics(path);
      const ls = this.ls as ts.LanguageService & {
        getRegionSemanticDiagnostics(f: string, r: ts.TextRange[]): { diagnostics: ts.Diagnostic[] } | undefined;
      };
      const sem = syn.length > 0 ? [] : (ls.getRegionSemanticDiagnostics(path, [range])?.diagnostics ?? []);
      return syn.length + sem.length;
    },
    /** An editor's diagnostics: syntactic, then semantic; with `fixes`, the quick fixes offered for each error too. */
    check(path: string, fixes = false): number {
      const syn = this.ls.getSyntacticDiagnostics(path);
      const sem = syn.length > 0 ? [] : this.ls.getSemanticDiagnostics(path);
      if (fixes)
        for (const d of [...syn, ...sem])
          this.ls.getCodeFixesAtPosition(path, d.start ?? 0, (d.start ?? 0) + (d.length ?? 0), [d.code], {}, {});
      return syn.length + sem.length;
    },
  };
}

function projectOf(dir: string): { options: ts.CompilerOptions; fileNames: string[] } {
  const cfg = ts.readConfigFile(join(dir, "tsconfig.json"), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(cfg.config ?? {}, ts.sys, dir);
  return { options: parsed.options, fileNames: parsed.fileNames };
}

type Payload = {
  engine: string;
  engine_reason?: string;
  coverage?: string;
  diagnostics: { code: string; line: number; fixes: { verified: boolean }[] }[];
  fixes_checked: number;
  fixes_unchecked: number;
  check_ms?: { diagnostics: number; fixes: number };
};

const stats = (xs: number[]) => ({ p50: r1(percentileOf(xs, 50)), p95: r1(percentileOf(xs, 95)) });

async function warmFile(): Promise<Record<string, unknown>> {
  const dir = copyProject({ name: "scule", root: join(CORPUS, "scule"), files: [] }, join(ROOT, "node_modules"));
  const { path, text: big } = writeBigFile(dir);
  const engine = new TypedEngine();
  const handler = createDiagnose(engine);
  const ask = async (text: string, constraints: Record<string, unknown> = {}) => {
    const ctx = standaloneContext({ traceId: "bench", budgetMs: 120_000, log: silent });
    const t = performance.now();
    const p = (await handler(
      {
        action: "diagnose",
        context: { workspace_root: dir, file_path: "src/big.ts", source_code: text },
        constraints: { check_wait_ms: 60_000, coverage: "auto", ...constraints },
      } as AipRequest,
      ctx,
    )) as Payload;
    return { ms: performance.now() - t, p };
  };
  const { options, fileNames } = projectOf(dir);
  const bare = bareService(dir, options, [...new Set([...fileNames, path])]);
  const t0 = performance.now();
  const first = await ask(big);
  const firstMs = performance.now() - t0;
  bare.update(path, big);
  bare.check(path);
  const loads: number[] = [];
  const errorText = (i: number) =>
    `${big}export function probe${i}(input: string): number {\n  const length = input.length;\n  return lenght;\n}\n`;
  const scenario = async (
    name: string,
    textOf: (i: number) => string,
    opts: {
      constraints?: Record<string, unknown>;
      reask?: boolean;
      /** Ask for the whole file right after each answer (`coverage: "file"`). */
      full?: boolean;
      bareFixes?: boolean;
    } = {},
  ) => {
    const agent: number[] = [];
    const reask: number[] = [];
    const full: number[] = [];
    const raw: number[] = [];
    const rawRegion: number[] = [];
    const coverage: Record<string, number> = {};
    let lastFull: Payload | undefined;
    let prevText = textOf(-1);
    const diagMs: number[] = [];
    const fixMs: number[] = [];
    let last: Payload | undefined;
    let lastReask: Payload | undefined;
    for (let i = 0; i < N; i++) {
      const text = textOf(i);
      // Each side first on alternate rounds: the one second pays the other's garbage less often.
      // The bare service's region: from the first to the last character that differs from the text before.
      let head = 0;
      while (head < text.length && text[head] === prevText[head]) head++;
      let tail = 0;
      while (tail < text.length - head && text[text.length - 1 - tail] === prevText[prevText.length - 1 - tail]) tail++;
      prevText = text;
      const bareTurn = () => {
        // The region check of a new text, then the whole file's check of another new text.
        bare.update(path, `${text}// region\n`);
        let s = performance.now();
        bare.region(path, { pos: head, end: Math.max(head, text.length - tail) });
        rawRegion.push(performance.now() - s);
        s = performance.now();
        bare.update(path, text);
        bare.check(path, opts.bareFixes);
        raw.push(performance.now() - s);
      };
      if (i % 2 === 1) bareTurn();
      const a = await ask(text, opts.constraints);
      agent.push(a.ms);
      last = a.p;
      coverage[a.p.coverage ?? a.p.engine] = (coverage[a.p.coverage ?? a.p.engine] ?? 0) + 1;
      if (opts.full) {
        const f = await ask(text, { ...opts.constraints, coverage: "file" });
        full.push(f.ms);
        lastFull = f.p;
      }
      if (a.p.check_ms) {
        diagMs.push(a.p.check_ms.diagnostics);
        fixMs.push(a.p.check_ms.fixes);
      }
      if (opts.reask) {
        const b = await ask(text);
        reask.push(b.ms);
        lastReask = b.p;
      }
      if (i % 2 === 0) bareTurn();
      loads.push(loadavg()[0]!);
    }
    return {
      [name]: {
        agent_ms: stats(agent),
        agent_coverage: coverage,
        bare_language_service_ms: stats(raw),
        bare_region_check_ms: stats(rawRegion),
        p95_ratio: r1(percentileOf(agent, 95) / Math.max(0.1, percentileOf(raw, 95))),
        ...(opts.full
          ? {
              full_after_region_ms: stats(full),
              full_p95_ratio: r1(percentileOf(full, 95) / Math.max(0.1, percentileOf(raw, 95))),
              full_answer: {
                coverage: lastFull?.coverage,
                diagnostics: lastFull?.diagnostics.map((d) => `${d.code}@${d.line}`),
                verified_fixes: lastFull?.diagnostics.flatMap((d) => d.fixes).filter((f) => f.verified).length,
              },
            }
          : {}),
        agent_stages_ms: { diagnostics: stats(diagMs), fixes: stats(fixMs) },
        answer: {
          engine: last?.engine,
          coverage: last?.coverage,
          diagnostics: last?.diagnostics.map((d) => `${d.code}@${d.line}`),
          fixes_checked: last?.fixes_checked,
          fixes_unchecked: last?.fixes_unchecked,
          verified_fixes: last?.diagnostics.flatMap((d) => d.fixes).filter((f) => f.verified).length,
        },
        ...(opts.reask
          ? {
              reask_ms: stats(reask),
              reask_answer: {
                fixes_checked: lastReask?.fixes_checked,
                fixes_unchecked: lastReask?.fixes_unchecked,
                verified_fixes: lastReask?.diagnostics.flatMap((d) => d.fixes).filter((f) => f.verified).length,
              },
            }
          : {}),
      },
    };
  };
  const out = {
    file_lines: big.split("\n").length,
    first_answer_ms: r1(firstMs),
    first_answer_engine: first.p.engine,
    ...(await scenario("unchanged", () => big)),
    ...(await scenario("comment_edit", (i) => `${big}// edit ${i}\n`)),
    ...(await scenario("error_edit", errorText, { full: true })),
    ...(await scenario("error_edit_file", (i) => errorText(500 + i), {
      constraints: { coverage: "file" },
      bareFixes: true,
    })),
    ...(await scenario("error_edit_unchanged", () => errorText(0), { bareFixes: true })),
    ...(await scenario("error_edit_no_check_budget", (i) => errorText(1000 + i), {
      constraints: { verify_budget_ms: 0, coverage: "file" },
      reask: true,
    })),
  };
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
  return { ...out, load_average_1m: { min: r1(Math.min(...loads)), max: r1(Math.max(...loads)) } };
}

/** 200 modules, each importing the one before: types, functions and a class. */
function writeWorkspace(dir: string, files = 200): string {
  mkdirSync(join(dir, "src"), { recursive: true });
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: { strict: true, target: "ES2022", module: "ES2022", lib: ["ES2022"], types: [] },
      include: ["src"],
    }),
  );
  for (let i = 0; i < files; i++) {
    const prev = i > 0 ? `import { Item${i - 1}, make${i - 1} } from "./m${i - 1}.js";\n` : "";
    const body = [
      `export interface Item${i} { id: number; name: string; tags: string[]; ${i > 0 ? `prev?: Item${i - 1};` : ""} }`,
      `export function make${i}(id: number, name: string): Item${i} {`,
      `  const tags = name.split("-").map((t) => t.trim()).filter(Boolean);`,
      `  return { id, name, tags${i > 0 ? `, prev: make${i - 1}(id - 1, name)` : ""} };`,
      `}`,
      `export class Store${i} {`,
      `  private readonly items = new Map<number, Item${i}>();`,
      `  add(item: Item${i}): this { this.items.set(item.id, item); return this; }`,
      `  find(pred: (x: Item${i}) => boolean): Item${i} | undefined { return [...this.items.values()].find(pred); }`,
      `  names(): string[] { return [...this.items.values()].map((x) => x.name.toUpperCase()); }`,
      `}`,
      ...Array.from(
        { length: 20 },
        (_, k) => `export const value${i}_${k} = make${i}(${k}, "v-${k}").tags.length + ${k};`,
      ),
    ];
    writeFileSync(join(dir, `src/m${i}.ts`), prev + body.join("\n") + "\n");
  }
  return join(dir, `src/m${files - 1}.ts`);
}

async function newWorkspace(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), "aip-diag-ws-"));
  const file = writeWorkspace(dir);
  // A syntax error and a type error: the first answer has the first, the checked one both.
  const text = readFileSync(file, "utf8") + `export const broken: number = "x";\nexport const also = (;\n`;
  const engine = new TypedEngine();
  const handler = createDiagnose(engine);
  const ask = async (constraints: Record<string, unknown>) =>
    (await handler(
      {
        action: "diagnose",
        context: { workspace_root: dir, file_path: "src/m199.ts", source_code: text },
        constraints,
      } as AipRequest,
      standaloneContext({ traceId: "bench", budgetMs: 120_000, log: silent }),
    )) as Payload;
  const load = loadavg()[0]!;
  const t0 = performance.now();
  const first = await ask({});
  const firstMs = performance.now() - t0;
  const checked = await ask({ check_wait_ms: 60_000 });
  const checkedMs = performance.now() - t0;
  await engine.close();
  // The bare service on the same workspace: its first syntactic answer, and its first semantic one.
  const b0 = performance.now();
  const { options, fileNames } = projectOf(dir);
  const bare = bareService(dir, options, fileNames);
  bare.update(file, text);
  const syn = bare.ls.getSyntacticDiagnostics(file).length;
  const bareSynMs = performance.now() - b0;
  bare.ls.getSemanticDiagnostics(file);
  const bareSemMs = performance.now() - b0;
  rmSync(dir, { recursive: true, force: true });
  return {
    files: 200,
    first_answer_ms: r1(firstMs),
    first_answer: {
      engine: first.engine,
      engine_reason: first.engine_reason,
      diagnostics: first.diagnostics.map((d) => `${d.code}@${d.line}`),
    },
    first_checked_answer_ms: r1(checkedMs),
    checked_answer: { engine: checked.engine, diagnostics: checked.diagnostics.map((d) => `${d.code}@${d.line}`) },
    bare_language_service: { syntactic_ms: r1(bareSynMs), syntactic_errors: syn, semantic_ms: r1(bareSemMs) },
    load_average_1m: r1(load),
  };
}

const result = {
  date: new Date().toISOString(),
  command: "npm run build && node dist/bench/diagnose-speed.js",
  machine: "2 shared cores; the load average is beside each section",
  iterations: N,
  new_workspace: await newWorkspace(),
  warm_file: await warmFile(),
};
const json = JSON.stringify(result, null, 1);
if (process.argv[2]) writeFileSync(process.argv[2], json + "\n");
console.log(json);
