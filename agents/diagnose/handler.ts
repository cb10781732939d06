/**
 * The diagnose action (docs/agents.md, "diagnose"): the errors of a file with checked fixes, or the
 * cause of a failure in tool output (tsc, a test runner, a stack trace) mapped to the workspace's code.
 */
import { isAbsolute, relative, resolve, sep } from "node:path";
import { actionInput } from "../../protocol/contract/actions.js";
import { AipError } from "../../protocol/contract/errors.js";
import { isInside } from "../../protocol/util/paths.js";
import type { AipRequest } from "../../protocol/contract/schemas.js";
import { ParseCache } from "../lib/code/cache.js";
import { guardHandler, partialFields } from "../lib/code/parse.js";
import { readRequestText } from "../lib/code/source.js";
import { containedPath, readContained, resolveRoot } from "../lib/code/workspace.js";
import {
  CHECK_LIMITS,
  type CandidateFix,
  type CheckedDiagnostic,
  type DiagnoseAnswer,
  type Edit,
  type Pos,
} from "../lib/diagnose/check.js";
import { applyCandidate, moduleOf, pythonCandidates, topLevelNames } from "../lib/diagnose/python-fixes.js";
import { listWorkspaceFiles } from "../lib/code/files.js";
import { parseOutput, type Failure, type RawFrame } from "../lib/diagnose/output.js";
import { mapThrough, type SourceMap } from "../lib/diagnose/sourcemap.js";
import type { TypedEngine } from "../lib/completion/engine.js";
import { isPythonRequest } from "../lib/completion/python/handler.js";
import { pythonLanguage, pythonPartial } from "../lib/code/languages/python/report.js";
import type { PyrightDiagnostic, PyrightEngine } from "../lib/completion/python/pyright.js";
import type { HandlerContext } from "../lib/runtime/types.js";
import { modelDiagnosis, type DiagnoseModel } from "./model.js";

/** Limits of the diagnose action (docs/agents.md, "diagnose"). */
export const DIAGNOSE_LIMITS = {
  /** Largest log read from context.output_path (bytes); a longer one is refused, unread. */
  maxLogBytes: 16 * 1024 * 1024,
  /** How long a request waits for a loaded workspace's checker by default (ms). */
  checkWaitMs: 10_000,
  /**
   * How long a request waits for a checker still loading its workspace, unless constraints.check_wait_ms
   * says otherwise (ms): the parser's syntax errors answer meanwhile, and the load goes on.
   */
  loadingWaitMs: 0,
  /** How long the checks of candidate fixes may take by default (ms); constraints.verify_budget_ms overrides it. */
  verifyBudgetMs: 1_000,
  /** Files of a tsc output checked again for their fixes. */
  maxCompileFiles: 10,
  /** Workspace Python files scanned for a name an undefined one may be imported from. */
  maxPythonModules: 2_000,
  /** Lines of code shown on each side of the cause. */
  contextLines: 3,
};

const TS_FILE = /\.(?:[cm]?[jt]sx?)$/;

/** A checked fix of a Python diagnostic, as answered. */
interface PyFixOut {
  description: string;
  fix_name: string;
  source: "agency";
  verified: boolean;
  not_verified?: string;
  edits: { file_path: string; range: { start: Pos; end: Pos }; new_text: string }[];
}

interface Frame {
  raw: string;
  function?: string;
  kind: "workspace" | "dependency" | "runtime" | "outside" | "unmapped";
  file_path?: string;
  line?: number;
  column?: number;
  mapped_from?: { file_path: string; line: number; column?: number };
  reason?: string;
}

const rel = (root: string, abs: string): string => relative(root, abs).split(sep).join("/");

function editOut(root: string | undefined, e: Edit) {
  return {
    file_path: root ? rel(root, e.file) : e.file,
    range: { start: e.start, end: e.end },
    new_text: e.new_text,
  };
}

function diagnosticOut(root: string | undefined, d: CheckedDiagnostic) {
  return {
    file_path: root ? rel(root, d.file) : d.file,
    line: d.start.line,
    column: d.start.column,
    range: { start: d.start, end: d.end },
    code: d.rule ?? `TS${d.code}`,
    message: d.message,
    severity: d.severity,
    fixes: d.fixes.map((f) => ({
      description: f.description,
      fix_name: f.fix_name,
      source: f.source,
      verified: f.verified,
      ...(f.not_verified !== undefined ? { not_verified: f.not_verified } : {}),
      edits: f.edits.map((e) => editOut(root, e)),
    })),
  };
}

/** Lines [line - n, line + n] of `text`, numbered, the line itself marked. */
function excerpt(text: string, line: number, n = DIAGNOSE_LIMITS.contextLines): string {
  const all = text.split("\n");
  const from = Math.max(1, line - n);
  const to = Math.min(all.length, line + n);
  const out: string[] = [];
  for (let i = from; i <= to; i++) out.push(`${i === line ? ">" : " "} ${String(i).padStart(4)} | ${all[i - 1]}`);
  return out.join("\n");
}

/** Map one frame to the workspace: never reads a file outside `root`, nor one in a dependency. */
async function mapFrame(
  root: string | undefined,
  f: RawFrame,
  maps: Map<string, Promise<{ map: SourceMap; dir: string; name: string } | string>>,
): Promise<Frame> {
  const base = { raw: f.raw, ...(f.function !== undefined ? { function: f.function } : {}) };
  const at = { line: f.line, ...(f.column !== undefined ? { column: f.column } : {}) };
  if (/^(?:node:|internal\/|<anonymous>|native)/.test(f.file))
    return { ...base, kind: "runtime", file_path: f.file, ...at };
  let file = f.file;
  if (file.startsWith("file://")) {
    try {
      file = decodeURIComponent(new URL(file).pathname);
    } catch {
      return { ...base, kind: "unmapped", file_path: f.file, ...at, reason: "not a file URL" };
    }
  }
  if (!root)
    return { ...base, kind: "unmapped", file_path: file, ...at, reason: "no context.workspace_root to map it to" };
  const abs = isAbsolute(file) ? resolve(file) : resolve(root, file);
  if (!isInside(root, abs))
    return { ...base, kind: "outside", file_path: file, ...at, reason: "outside the workspace; not read" };
  const parts = abs.split(sep);
  // Installed packages inside the workspace: npm's, and a virtual environment's (.venv/lib/…/site-packages).
  if (parts.includes("node_modules") || parts.includes("site-packages"))
    return { ...base, kind: "dependency", file_path: rel(root, abs), ...at };
  let real: string;
  try {
    real = await containedPath(root, abs);
  } catch (err) {
    return { ...base, kind: "unmapped", file_path: rel(root, abs), ...at, reason: (err as Error).message };
  }
  if (/\.[cm]?js$/.test(real)) {
    const m = await mapThrough(root, real, f.line, f.column ?? 0, maps);
    if (m.ok)
      return {
        ...base,
        kind: m.file.split(sep).includes("node_modules") ? "dependency" : "workspace",
        file_path: rel(root, m.file),
        line: m.line,
        column: m.column,
        mapped_from: { file_path: rel(root, real), ...at },
      };
    // Built output without a map is still the workspace's own code, where it ran.
    if (/no sourceMappingURL/.test(m.reason)) return { ...base, kind: "workspace", file_path: rel(root, real), ...at };
    return { ...base, kind: "unmapped", file_path: rel(root, real), ...at, reason: m.reason };
  }
  return { ...base, kind: "workspace", file_path: rel(root, real), ...at };
}

export function createDiagnose(
  typed: TypedEngine,
  model?: DiagnoseModel,
  cache = new ParseCache(),
  pyright?: PyrightEngine,
) {
  return guardHandler(async (request: AipRequest, ctx: HandlerContext): Promise<unknown> => {
    const { context, constraints } = actionInput("diagnose", request);
    const waitMs = Math.min(
      constraints.check_wait_ms ?? DIAGNOSE_LIMITS.checkWaitMs,
      Math.max(0, ctx.remainingMs() - 50),
    );
    const loadingWaitMs = Math.min(waitMs, constraints.check_wait_ms ?? DIAGNOSE_LIMITS.loadingWaitMs);
    const verifyBudgetMs = constraints.verify_budget_ms ?? DIAGNOSE_LIMITS.verifyBudgetMs;
    const verify = constraints.verify ?? true;
    const noModel = (): { used: false; reason: string } => ({
      used: false,
      reason:
        model?.host.state.status === "none" || !model
          ? "no model configured (AIP_MODEL): no explanation or model fix; the diagnostics and checked fixes are complete without one"
          : `the model is not ready (${model.host.state.status})`,
    });
    const ask = (
      root: string,
      path: string,
      text: string,
      extra: {
        candidates?: CandidateFix[];
        definitionAt?: { line: number; column: number };
        diagnostics?: boolean;
        coverage?: "auto" | "file";
        ranges?: { start: Pos; end: Pos }[];
      } = {},
      // Tool output waits for a loading checker as for a loaded one: it asks once, not at every keystroke.
      loadingMs = waitMs,
    ) =>
      typed.diagnose(
        { root, path, text, verify, verifyBudgetMs, deadline: ctx.deadline - 100, ...extra },
        Math.max(0, Math.min(waitMs, ctx.remainingMs() - 50)),
        ctx.log,
        loadingMs,
      );

    if (context.output !== undefined || context.output_path !== undefined) return diagnoseOutput();
    if (isPythonRequest(request)) return diagnosePython();

    // ---- a file or buffer ----
    const src = await readRequestText(request);
    ctx.timer.mark("read");
    const head = {
      mode: "file" as const,
      ...(src.displayPath !== undefined ? { file_path: src.displayPath } : {}),
      language: src.dialect.language,
    };
    const syntaxOnly = (reason: string, fallbacks: string[] = []) => {
      const parsed = cache.get(src.text, src.dialect, src.absPath, src.displayPath);
      const { diagnostics = [] } = partialFields(parsed);
      return {
        ...head,
        engine: "syntax",
        engine_reason: reason,
        ...(fallbacks.length ? { fallbacks } : {}),
        diagnostics: diagnostics.map((d) => ({ ...d, severity: "error", code: "syntax", fixes: [] })),
        fixes_checked: 0,
        fixes_unchecked: 0,
        model: noModel(),
        notes: [],
      };
    };
    if (src.root === undefined || src.absPath === undefined || !TS_FILE.test(src.absPath))
      return syntaxOnly(
        src.absPath !== undefined && !TS_FILE.test(src.absPath)
          ? `${src.displayPath} is not a TypeScript or JavaScript file: syntax errors only`
          : "no context.workspace_root + context.file_path: syntax errors only (the checker needs the workspace's project)",
      );
    // The region to check first in a long changed file: the client's ranges, else its cursor, else
    // (in the worker) the span changed since the buffer the checker held.
    const ranges = context.ranges ?? (context.cursor ? [{ start: context.cursor, end: context.cursor }] : undefined);
    const coverage = constraints.coverage ?? "file";
    const r = await ask(src.root, src.absPath, src.text, { coverage, ...(ranges ? { ranges } : {}) }, loadingWaitMs);
    ctx.timer.mark("check");
    if ("reason" in r) return syntaxOnly(r.reason, r.fallback);
    let diagnosis: DiagnoseAnswer = r.diagnosis;
    let modelOut: Record<string, unknown> = noModel();
    // A region answer is the fast one: the model explains with the whole file's answer.
    if (model?.host.ready && diagnosis.coverage === "region")
      modelOut = { used: false, reason: 'coverage "region": the model is asked with the whole file\'s answer' };
    else if (model?.host.ready && diagnosis.diagnostics.some((d) => d.severity === "error")) {
      const first = diagnosis.diagnostics.find((d) => d.severity === "error")!;
      const m = await modelDiagnosis(model, ctx, {
        message: `TS${first.code}: ${first.message}`,
        line: first.start.line,
        text: src.text,
        maxTokens: constraints.max_tokens ?? 96,
        limitMs: constraints.inference_timeout_ms,
      });
      ctx.timer.mark("inference");
      modelOut = m.out;
      if (m.fix) {
        // The model's fix is checked against the whole file, as every fix is.
        const again = await ask(src.root, src.absPath, src.text, {
          coverage: "file",
          candidates: [
            {
              line: first.start.line,
              code: first.code,
              description: m.fix.description,
              edits: [{ file: src.absPath, ...m.fix.edit }],
            },
          ],
        });
        if ("diagnosis" in again) diagnosis = again.diagnosis;
        const mine = diagnosis.diagnostics.flatMap((d) => d.fixes).find((f) => f.source === "model");
        modelOut = { ...modelOut, fix_verified: mine?.verified ?? false };
      }
    }
    return {
      ...head,
      engine: "checker",
      ...(r.fallback.length ? { fallbacks: r.fallback } : {}),
      coverage: diagnosis.coverage,
      ...(diagnosis.checked_ranges ? { checked_ranges: diagnosis.checked_ranges } : {}),
      diagnostics: diagnosis.diagnostics.map((d) => diagnosticOut(src.root, d)),
      ...(diagnosis.more > 0 ? { more_diagnostics: diagnosis.more } : {}),
      fixes_checked: diagnosis.checked,
      fixes_unchecked: diagnosis.unchecked,
      model: modelOut,
      notes:
        diagnosis.coverage === "region"
          ? [
              'coverage "region": the edited region was type-checked first; the whole file is being checked now, and the fixes with it: ask again (or with constraints.coverage "file") for the whole answer',
            ]
          : [],
      check_ms: diagnosis.ms,
    };

    // ---- a Python file or buffer: pyright's diagnostics (it offers no code fixes) ----
    async function diagnosePython(): Promise<unknown> {
      // Read as any request's text is (containment, size limits); the TypeScript dialect it names is unused.
      const loc = await readRequestText({ ...request, context: { ...context, language: "typescript" } });
      ctx.timer.mark("read");
      const head = {
        mode: "file" as const,
        ...(loc.displayPath !== undefined ? { file_path: loc.displayPath } : {}),
        language: "python",
      };
      const notes: string[] = [];
      const syntaxOnly = async (reason: string, fallbacks: string[] = []) => {
        const doc = (await pythonLanguage()).parse(loc.text, loc.displayPath);
        return {
          ...head,
          engine: "syntax",
          engine_reason: reason,
          ...(fallbacks.length ? { fallbacks } : {}),
          diagnostics: (pythonPartial(doc).diagnostics ?? []).map((d) => ({
            ...d,
            severity: "error",
            code: "syntax",
            fixes: [],
          })),
          fixes_checked: 0,
          fixes_unchecked: 0,
          model: noModel(),
          notes,
        };
      };
      if (!pyright || loc.root === undefined || loc.absPath === undefined || !/\.pyi?$/i.test(loc.absPath))
        return syntaxOnly(
          pyright
            ? "no context.workspace_root + context.file_path of a .py file: syntax errors only (the checker needs the workspace)"
            : "no Python checker in this agent: syntax errors only",
        );
      const r = await pyright.diagnose(
        { root: loc.root, path: loc.absPath, text: loc.text },
        Math.max(0, Math.min(waitMs, ctx.remainingMs() - 50)),
        ctx.log,
      );
      ctx.timer.mark("check");
      if ("reason" in r) return syntaxOnly(r.reason, r.fallback);
      const diagnostics = r.diagnostics.map((d) => {
        const start = { line: d.range.start.line + 1, column: d.range.start.character };
        return {
          file_path: loc.displayPath ?? rel(loc.root!, loc.absPath!),
          line: start.line,
          column: start.column,
          range: { start, end: { line: d.range.end.line + 1, column: d.range.end.character } },
          code: d.code ?? "syntax",
          message: d.message,
          severity: d.severity === 1 ? "error" : "warning",
          fixes: [] as PyFixOut[],
        };
      });
      const checks = verify
        ? await checkPythonFixes(pyright, loc.root, loc.absPath, loc.text, r.diagnostics, diagnostics)
        : { checked: 0, unchecked: 0 };
      ctx.timer.mark("fixes");
      let modelOut: Record<string, unknown> = noModel();
      const first = diagnostics.find((d) => d.severity === "error");
      if (model?.host.ready && first) {
        const m = await modelDiagnosis(model, ctx, {
          message: `${first.code}: ${first.message}`,
          line: first.line,
          text: loc.text,
          maxTokens: constraints.max_tokens ?? 96,
          limitMs: constraints.inference_timeout_ms,
          explainOnly: true,
        });
        modelOut = m.out;
      }
      return {
        ...head,
        engine: "checker",
        checker: "pyright",
        ...(r.fallback.length ? { fallbacks: r.fallback } : {}),
        diagnostics,
        fixes_checked: checks.checked,
        fixes_unchecked: checks.unchecked,
        model: modelOut,
        notes,
      };
    }

    /**
     * Candidates for pyright's diagnostics (agents/lib/diagnose/python-fixes.ts), each checked by
     * pyright on the edited buffer within the check budget: verified when the diagnostic is gone and
     * no error or warning appeared that was not there before. The buffer is given back to pyright after.
     */
    async function checkPythonFixes(
      checker: PyrightEngine,
      root: string,
      path: string,
      text: string,
      raw: PyrightDiagnostic[],
      out: { code: string; message: string; range: { start: Pos; end: Pos }; fixes: PyFixOut[] }[],
    ): Promise<{ checked: number; unchecked: number }> {
      const keyOf = (d: { code?: string; message: string }) => `${d.code ?? "syntax"}: ${d.message}`;
      const before = new Map<string, number>();
      for (const d of raw) before.set(keyOf(d), (before.get(keyOf(d)) ?? 0) + 1);
      const exports = out.some((d) => /is not defined/.test(d.message))
        ? await workspaceExports(root, path)
        : new Map<string, Set<string>>();
      const ends = performance.now() + verifyBudgetMs;
      let checked = 0;
      let unchecked = 0;
      const fileOut = rel(root, path);
      try {
        for (const d of out) {
          const members = /^Cannot access attribute/.test(d.message)
            ? await checker.members(
                { root, path, text, line: d.range.start.line - 1, character: d.range.start.column },
                Math.max(0, Math.min(waitMs, ctx.remainingMs() - 50)),
              )
            : [];
          const candidates = pythonCandidates(
            { code: d.code, message: d.message, start: d.range.start, end: d.range.end },
            text,
            exports,
            members,
          ).slice(0, CHECK_LIMITS.maxFixesPerDiagnostic);
          for (const c of candidates) {
            const fix: PyFixOut = {
              description: c.description,
              fix_name: c.fix_name,
              source: "agency",
              verified: false,
              edits: [{ file_path: fileOut, range: { start: c.start, end: c.end }, new_text: c.new_text }],
            };
            d.fixes.push(fix);
            const left = Math.min(ends - performance.now(), ctx.remainingMs() - 200);
            if (left <= 0 || checked >= CHECK_LIMITS.maxVerifications) {
              unchecked++;
              fix.not_verified =
                "not checked within the request's check budget (constraints.verify_budget_ms) or its deadline";
              continue;
            }
            checked++;
            const after = await checker.diagnose({ root, path, text: applyCandidate(text, c) }, left, ctx.log);
            if ("reason" in after) {
              fix.not_verified = `not checked: ${after.reason}`;
              continue;
            }
            const pool = new Map(before);
            pool.set(keyOf(d), (pool.get(keyOf(d)) ?? 1) - 1);
            const added: string[] = [];
            for (const a of after.diagnostics) {
              const n = pool.get(keyOf(a)) ?? 0;
              if (n > 0) pool.set(keyOf(a), n - 1);
              else added.push(keyOf(a));
            }
            if (added.length === 0) fix.verified = true;
            else fix.not_verified = `errors after the fix: ${added.slice(0, 3).join("; ")}`;
          }
          d.fixes.sort((a, b) => Number(b.verified) - Number(a.verified));
        }
      } finally {
        checker.setText(root, path, text);
      }
      return { checked, unchecked };
    }

    /** The workspace's Python modules and their top-level names, the diagnosed file's own left out. */
    async function workspaceExports(root: string, path: string): Promise<Map<string, Set<string>>> {
      const out = new Map<string, Set<string>>();
      const files = await listWorkspaceFiles(root, {
        maxFiles: DIAGNOSE_LIMITS.maxPythonModules,
        accept: (f) => /\.py$/.test(f) && !/(?:^|\/)(?:\.?venv|site-packages|__pycache__)\//.test(f),
      });
      for (const f of files) {
        if (f.abs === path) continue;
        const mod = moduleOf(f.rel);
        if (!mod) continue;
        try {
          out.set(mod, topLevelNames((await readContained(root, f.abs)).text));
        } catch {
          // A file that vanished or cannot be read offers nothing.
        }
      }
      return out;
    }

    // ---- tool output ----
    async function diagnoseOutput(): Promise<unknown> {
      const rootIn = context.workspace_root;
      const root = rootIn !== undefined ? await resolveRoot(rootIn) : undefined;
      let text = context.output ?? "";
      const notes: string[] = [];
      if (context.output_path !== undefined) {
        if (!root)
          throw new AipError(
            "AIP_ERR_MISSING_FIELD",
            "Missing required field: context.workspace_root (needed to read context.output_path)",
            {
              extensions: { fields: ["context.workspace_root"] },
            },
          );
        const path = await containedPath(root, context.output_path);
        text = (await readContained(root, path, { maxBytes: DIAGNOSE_LIMITS.maxLogBytes })).text;
      }
      const parsed = parseOutput(text);
      notes.push(...parsed.notes);
      if (!root) notes.push("no context.workspace_root: frames and files are not mapped or read");
      ctx.timer.mark("parse");
      // tsc: the named files diagnosed again by the checker, for their fixes.
      const compile: ReturnType<typeof diagnosticOut>[] = [];
      const byFile = new Map<string, typeof parsed.compile>();
      for (const e of parsed.compile) byFile.set(e.file, [...(byFile.get(e.file) ?? []), e]);
      let files = 0;
      for (const [file, errors] of byFile) {
        const asIs = () =>
          errors.map((e) => ({
            file_path: file,
            line: e.line,
            column: e.column,
            range: { start: e, end: e },
            code: e.code,
            message: e.message,
            severity: e.severity,
            fixes: [],
          }));
        const abs = root ? resolve(root, file) : undefined;
        if (!root || !abs || !isInside(root, abs) || files >= DIAGNOSE_LIMITS.maxCompileFiles) {
          compile.push(...asIs());
          if (root && abs && !isInside(root, abs)) notes.push(`${file} is outside the workspace; not read`);
          continue;
        }
        files++;
        let answer: DiagnoseAnswer | undefined;
        try {
          const real = await containedPath(root, abs);
          const { text: fileText } = await readContained(root, real);
          const a = await ask(root, real, fileText);
          if ("diagnosis" in a) answer = a.diagnosis;
          else notes.push(`${file}: ${a.reason}`);
        } catch (err) {
          notes.push(`${file}: ${(err as Error).message}`);
        }
        for (const e of errors) {
          const d = answer?.diagnostics.find((x) => x.start.line === e.line && `TS${x.code}` === e.code);
          if (d) compile.push(diagnosticOut(root, d));
          else
            compile.push({
              ...asIs().find((x) => x.line === e.line && x.code === e.code)!,
              not_reproduced: answer !== undefined,
            } as never);
        }
      }
      ctx.timer.mark("check");
      // Failures: frames mapped, the innermost workspace frame as the cause.
      const maps = new Map<string, Promise<{ map: SourceMap; dir: string; name: string } | string>>();
      const failures = [];
      for (const f of parsed.failures) failures.push(await failureOut(root, f, maps));
      ctx.timer.mark("map");
      let modelOut: Record<string, unknown> = noModel();
      const first = failures.find((f) => f.cause);
      if (model?.host.ready && first?.cause) {
        const m = await modelDiagnosis(model, ctx, {
          message: `${first.error ?? "Error"}: ${first.message}`,
          line: first.cause.line,
          text: first.cause.file_text,
          maxTokens: constraints.max_tokens ?? 96,
          limitMs: constraints.inference_timeout_ms,
          explainOnly: true,
        });
        modelOut = m.out;
      }
      const out = failures.map(({ cause, ...f }) => {
        if (!cause) return f;
        const { file_text: _t, ...c } = cause;
        return { ...f, cause: c };
      });
      const top = out.find((f) => "cause" in f) as { cause?: unknown; assertion?: unknown } | undefined;
      return {
        mode: "output",
        tool: parsed.tool,
        diagnostics: compile,
        failures: out,
        ...(top?.cause ? { cause: top.cause } : {}),
        ...(top?.assertion ? { assertion: top.assertion } : {}),
        model: modelOut,
        notes,
      };
    }

    async function failureOut(
      root: string | undefined,
      f: Failure,
      maps: Map<string, Promise<{ map: SourceMap; dir: string; name: string } | string>>,
    ) {
      const frames: Frame[] = [];
      for (const raw of f.frames) frames.push(await mapFrame(root, raw, maps));
      const causeFrame = frames.find((x) => x.kind === "workspace");
      let cause:
        | {
            file_path: string;
            line: number;
            column?: number;
            function?: string;
            mapped_from?: Frame["mapped_from"];
            code?: string;
            definition?: unknown;
            file_text: string;
          }
        | undefined;
      if (root && causeFrame?.file_path && causeFrame.line !== undefined) {
        let fileText = "";
        let code: string | undefined;
        try {
          fileText = (await readContained(root, resolve(root, causeFrame.file_path))).text;
          code = excerpt(fileText, causeFrame.line);
        } catch {
          code = undefined;
        }
        let definition: unknown;
        if (code !== undefined && TS_FILE.test(causeFrame.file_path)) {
          const d = await ask(root, resolve(root, causeFrame.file_path), fileText, {
            diagnostics: false,
            definitionAt: { line: causeFrame.line, column: causeFrame.column ?? 0 },
          });
          const def = "diagnosis" in d ? d.diagnosis.definition : undefined;
          if (def)
            definition = {
              name: def.name,
              where: def.where,
              ...(def.where === "workspace"
                ? { file_path: rel(root, def.file), line: def.line, code: def.text }
                : { line: def.line }),
            };
        }
        cause = {
          file_path: causeFrame.file_path,
          line: causeFrame.line,
          ...(causeFrame.column !== undefined ? { column: causeFrame.column } : {}),
          ...(causeFrame.function !== undefined ? { function: causeFrame.function } : {}),
          ...(causeFrame.mapped_from ? { mapped_from: causeFrame.mapped_from } : {}),
          ...(code !== undefined ? { code } : {}),
          ...(definition !== undefined ? { definition } : {}),
          file_text: fileText,
        };
      }
      // The test's line: the innermost workspace frame in a test file (the assertion's own line).
      const testFrame = frames.find(
        (x) =>
          x.kind === "workspace" &&
          /(?:^|\/)(?:test|tests|__tests__)\/|\.(?:test|spec)\.[cm]?[jt]sx?$/.test(x.file_path ?? ""),
      );
      const assertion =
        f.expected !== undefined || f.actual !== undefined || /assert/i.test(f.error ?? "")
          ? {
              ...(f.expected !== undefined ? { expected: f.expected } : {}),
              ...(f.actual !== undefined ? { actual: f.actual } : {}),
              ...(testFrame ? { test_line: { file_path: testFrame.file_path, line: testFrame.line } } : {}),
            }
          : undefined;
      return {
        ...(f.test !== undefined ? { test: f.test } : {}),
        ...(f.error !== undefined ? { error: f.error } : {}),
        message: f.message,
        ...(assertion ? { assertion } : {}),
        ...(cause ? { cause } : {}),
        frames,
        dependency_frames: frames.filter((x) => x.kind === "dependency" || x.kind === "runtime").length,
        unmapped_frames: frames
          .filter((x) => x.kind === "unmapped" || x.kind === "outside")
          .map((x) => ({ raw: x.raw, reason: x.reason ?? "" })),
      };
    }
  });
}
