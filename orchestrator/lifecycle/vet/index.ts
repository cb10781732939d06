/**
 * Sandbox vetting of agent executables (docs/operations.md, Vetting). The seed trusts no third-party executable: before an
 * agent joins, its links and its behaviour are checked.
 *
 * Public API (the orchestrator's):
 *
 *   vetAgent(executablePath, { policy?, timeoutMs?, cache?, args?, env?, probes?, pathEnv? }): Promise<VetReport>
 *     - executablePath: a path, or a bare name looked up on PATH (a config `command` [cmd, ...args] is
 *       vetted as vetAgent(cmd, { args })).
 *     - static: ELF → `readelf -d` NEEDED (transitively); `#!` script → interpreter chain resolved to its
 *       ELF (`/usr/bin/env node` → the node found on PATH), plus native `.node` addons loaded at run time;
 *       GPU/driver libraries refused unless the manifest declares `resources.gpu` and `policy.allow_gpu`.
 *     - dynamic: two runs under `strace -f` (empty stdin; `--manifest`) inside the sandbox (sandbox.ts), with
 *       the real run's environment, HOME, TMPDIR and cwd, `timeoutMs` each (default 5000), run concurrently.
 *     - report.ok: every check passed. report.couldNotVet: strace/readelf missing or unusable (reasons say
 *       how to install); never cached. report.reasons: one "rule: detail" line per violation.
 *   loadPolicy(path?): VetPolicy — the policy file (default manifests/vet-policy.json), defaults filled in.
 *   new VetCache(file?, keyFile?) — results keyed by the sha256 of the executable and of every file in its
 *     interpreter chain, plus the policy; persisted when `file` is given, each entry MAC-signed.
 *   formatReport(report) — the human table `aip vet` prints.
 *   admission(report, mode) / vettingSummary(report, mode) / defaultVetMode(orchestratorMode) — the
 *     orchestrator's `required | warn | off` policy: whether to register, and what /v1/agents shows.
 */
import { createHash } from "node:crypto";
import { homedir } from "node:os";
import { resolve } from "node:path";
import { fingerprint, keyedEnv, VetCache, type Fingerprint } from "./cache.js";
import { commandPaths, findSandbox, type SandboxLayout } from "./sandbox.js";
import { agentEnvironment } from "../../core/agent-env.js";
import { DEFAULT_PROBES, traceRun, type Probe, type ProbeRun, type TraceOptions } from "./dynamic.js";
import { judgeManifest } from "./manifest.js";
import { DEFAULT_POLICY, loadPolicy, matchesLibrary, type VetPolicy } from "./policy.js";
import { buildChecks, dedupe, type VetReport } from "./report.js";
import { canonical, judgeRun, type Violation } from "./rules.js";
import { inspectExecutable, libraryClosure, type ExecutableInfo, type Library } from "./static.js";
import { findTools, which, type Tools } from "./tools.js";

export { loadPolicy, VetCache, DEFAULT_POLICY, DEFAULT_PROBES };
export { formatReport, CHECKS } from "./report.js";
export { admission, defaultVetMode, vettingSummary, VET_MODES, type Admission, type VetMode } from "./admission.js";
export type { VetPolicy, VetReport, Violation, Probe };
export type { VetCheck } from "./report.js";

export const DEFAULT_TIMEOUT_MS = 5000;

export interface VetOptions {
  policy?: VetPolicy;
  /** Limit per run (default 5000 ms). */
  timeoutMs?: number;
  cache?: VetCache;
  /** Arguments before the probe's own (`--manifest`), e.g. the script when the command is `node script.js`. */
  args?: string[];
  /** The whole environment of the real run (default: this process's, without UNSAFE_ENV names). */
  env?: Record<string, string>;
  /** The real run's cwd (default: this process's), directories to hide (socket dirs), paths to keep visible. */
  layout?: Partial<Pick<SandboxLayout, "cwd" | "hide" | "keep">>;
  /** The agent's configured env (its absolute paths stay visible in the sandbox); default: none. */
  configEnv?: Record<string, string>;
  /** Extra runs beyond the two default ones (e.g. a real request), judged by the same rules. */
  probes?: Probe[];
  /** PATH the agent runs with (its `#!/usr/bin/env` interpreter is found on it); default: `env.PATH`. */
  pathEnv?: string;
  /** Tool names or paths (default "strace", "readelf" on PATH). */
  tools?: { strace?: string; readelf?: string };
}

/** Vet one agent executable. Never throws for the agent's sake; "could not vet" is a report too. */
export async function vetAgent(executablePath: string, options: VetOptions = {}): Promise<VetReport> {
  const started = performance.now();
  const env = options.env ?? agentEnvironment({ env: {}, workspaceRoots: [] });
  const pathEnv = options.pathEnv ?? env.PATH ?? "/usr/local/bin:/usr/bin:/bin";
  if (options.pathEnv !== undefined) env.PATH = options.pathEnv;
  const exe = executablePath.includes("/")
    ? resolve(executablePath)
    : (which(executablePath, pathEnv) ?? resolve(executablePath));
  const policy = options.policy ?? loadPolicy();
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const { args = [] } = options;
  const layout: SandboxLayout = {
    home: env.HOME ?? homedir(),
    tmpdir: env.TMPDIR ?? "/tmp",
    cwd: options.layout?.cwd ?? process.cwd(),
    hide: options.layout?.hide ?? [],
    keep: [],
  };
  const base = { executable: exe, sha256: "", interpreter: [exe], libraries: [] as Library[], addons: [] as string[] };
  const finish = (r: Omit<VetReport, "durationMs" | "vettedAt">): VetReport => ({
    ...r,
    durationMs: performance.now() - started,
    vettedAt: new Date().toISOString(),
  });

  const info = inspectExecutable(exe, pathEnv);
  layout.keep = [
    ...commandPaths([exe, ...args], options.configEnv ?? {}),
    ...info.chain,
    ...(options.layout?.keep ?? []),
  ];
  // Keyed by what decides the verdict; not by the hidden socket directories (an embedded agency's are
  // new each start) nor by VOLATILE_ENV.
  const { hide: _hide, ...placed } = layout;
  const policyKey = createHash("sha256")
    .update(
      JSON.stringify({ policy, timeoutMs, pathEnv, args, env: keyedEnv(env), placed, probes: options.probes ?? [] }),
    )
    .digest("hex");
  let fp: Fingerprint | undefined;
  try {
    // The executable and every file of its interpreter chain: a changed interpreter is a new candidate.
    fp = await fingerprint(
      exe,
      info.chain.filter((p) => p !== exe),
      options.cache?.chainHash,
    );
  } catch {
    // reported by the executable check below
  }
  const cached = fp && options.cache?.get(exe, fp, policyKey);
  if (cached) return { ...cached, cached: true };

  const tools = await findTools(options.tools);
  if (typeof tools === "string") {
    return finish({ ...base, sha256: fp?.sha256 ?? "", ok: false, couldNotVet: true, checks: [], reasons: [tools] });
  }
  const sandbox = await findSandbox();
  if (typeof sandbox === "string") {
    return finish({ ...base, sha256: fp?.sha256 ?? "", ok: false, couldNotVet: true, checks: [], reasons: [sandbox] });
  }
  let report: VetReport;
  if (info.problem !== undefined || !fp) {
    const v: Violation[] = [{ rule: "executable", detail: info.problem ?? `${exe} is not readable` }];
    report = finish({
      ...base,
      sha256: fp?.sha256 ?? "",
      interpreter: info.chain,
      ok: false,
      couldNotVet: false,
      checks: buildChecks(v),
      reasons: reasons(v),
    });
  } else {
    const probes = [...DEFAULT_PROBES, ...(options.probes ?? [])].map((p) => ({ ...p, args: [...args, ...p.args] }));
    report = finish(
      await vetRuns(exe, fp.sha256, info, policy, tools, {
        timeoutMs,
        env,
        probes,
        sandbox: { bwrap: sandbox.bwrap, layout },
      }),
    );
  }
  if (fp) options.cache?.set(exe, fp, policyKey, report);
  return report;
}

async function vetRuns(
  exe: string,
  sha256: string,
  info: ExecutableInfo,
  policy: VetPolicy,
  tools: Tools,
  o: { timeoutMs: number; env: Record<string, string>; probes: Probe[]; sandbox: TraceOptions["sandbox"] },
): Promise<Omit<VetReport, "durationMs" | "vettedAt">> {
  const settled = await Promise.allSettled(
    o.probes.map((p) =>
      traceRun(exe, p, {
        strace: tools.strace,
        timeoutMs: o.timeoutMs,
        seccomp: tools.seccomp,
        env: o.env,
        sandbox: o.sandbox,
      }),
    ),
  );
  const runs: ProbeRun[] = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed) {
    for (const r of runs) r.cleanup();
    const message = `could not run the sandbox (${o.sandbox.bwrap}): ${(failed.reason as Error).message}`;
    return {
      executable: exe,
      sha256,
      interpreter: info.chain,
      libraries: [],
      addons: [],
      ok: false,
      couldNotVet: true,
      checks: [],
      reasons: [message],
    };
  }
  try {
    const violations: Violation[] = [];
    const manifestRun = runs.find((r) => r.probe.name === "manifest");
    const m = manifestRun && !manifestRun.timedOut ? judgeManifest(manifestRun.stdout) : { violations: [] };
    violations.push(...m.violations);
    const gpuAllowed = policy.allow_gpu && m.manifest?.resources.gpu === true;
    for (const run of runs) violations.push(...judgeRun(run, { policy, info, gpuAllowed }));

    const addons = [
      ...new Set(
        runs
          .flatMap((r) => r.events)
          .filter((e) => e.kind === "file" && e.ok && e.access === "read" && (e.kernelPath ?? e.path).endsWith(".node"))
          .map((e) => canonical(e.kind === "file" ? (e.kernelPath ?? e.path) : "")),
      ),
    ];
    let libraries: Library[] = [];
    try {
      libraries = await libraryClosure([info.elf!, ...addons], tools.readelf);
    } catch (err) {
      violations.push({ rule: "executable", detail: (err as Error).message });
    }
    if (!gpuAllowed) {
      for (const lib of libraries.filter((l) => matchesLibrary(policy.gpu_libraries, l.path ?? l.name))) {
        const why = m.manifest?.resources.gpu
          ? "the policy does not allow GPU agents (allow_gpu: false)"
          : "the manifest does not declare resources.gpu";
        violations.push({
          rule: "gpu-library",
          detail: `${lib.neededBy} links ${lib.name}${lib.path ? ` (${lib.path})` : ""}; ${why}`,
        });
      }
    }
    const unique = dedupe(violations);
    return {
      executable: exe,
      sha256,
      interpreter: info.chain,
      libraries,
      addons,
      ...(m.manifest ? { manifest: m.manifest } : {}),
      ok: unique.length === 0,
      couldNotVet: false,
      checks: buildChecks(unique),
      reasons: reasons(unique),
    };
  } finally {
    for (const r of runs) r.cleanup();
  }
}

function reasons(vs: Violation[]): string[] {
  return dedupe(vs).map((v) => `${v.rule}: ${v.detail}`);
}
