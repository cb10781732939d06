/**
 * Judging one traced run against the policy: network, Unix sockets, writes, sensitive reads, execs,
 * GPU libraries opened at run time, stderr, the time limit, and the answer to empty input. Every
 * decision is made on parsed syscalls with resolved, canonical paths — never on substrings of the trace.
 */
import { existsSync, realpathSync } from "node:fs";
import { posix } from "node:path";
import { isInsideAny } from "../../../protocol/util/paths.js";
import { ResponseSchema } from "../../../protocol/contract/schemas.js";
import type { ProbeRun } from "./dynamic.js";
import { expandPath, matchesLibrary, underPattern, type VetPolicy } from "./policy.js";
import type { ExecutableInfo } from "./static.js";
import type { FileEvent, NetEvent } from "./strace.js";

export interface Violation {
  rule: string;
  detail: string;
  /** The strace line(s), or the offending output. */
  evidence?: string;
}

export interface RuleContext {
  policy: VetPolicy;
  info: ExecutableInfo;
  /** The manifest declares a GPU and the policy allows GPU agents. */
  gpuAllowed: boolean;
}

/** Socket families an agent may create: AIP-1 is Unix sockets only. */
const ALLOWED_FAMILIES = new Set(["AF_UNIX", "AF_LOCAL"]);

/** Resolve symlinks in the longest existing prefix of `path` (the rest may not exist, or no longer). */
export function canonical(path: string): string {
  let head = path;
  const tail: string[] = [];
  while (head !== "/" && !existsSync(head)) {
    tail.unshift(posix.basename(head));
    head = posix.dirname(head);
  }
  try {
    return posix.join(realpathSync(head), ...tail);
  } catch {
    return path;
  }
}

/** All violations of one run. */
export function judgeRun(run: ProbeRun, ctx: RuleContext): Violation[] {
  const { policy } = ctx;
  const v: Violation[] = [];
  const started = run.events.some((e) => e.kind === "exec" && e.ok);
  if (!started) {
    return [
      {
        rule: "executable",
        detail: `${run.probe.name}: the executable could not be started`,
        evidence: run.stderr.slice(0, 500),
      },
    ];
  }
  const expand = (entries: string[]): string[] =>
    entries.flatMap((e) => expandPath(e, run.scratch)).map((p) => (p.includes("*") ? p : canonical(p)));
  const writeRoots = expand(policy.write_roots);
  const socketDirs = expand(policy.socket_dirs);
  const sensitive = expand(policy.sensitive_paths);

  for (const e of run.events) {
    if (e.kind === "file") fileRules(e, writeRoots, sensitive, ctx, v);
    else if (e.kind === "net") netRules(e, socketDirs, writeRoots, v);
    else if (e.kind === "evasive")
      v.push({
        rule: "evasive-syscall",
        detail: `${e.syscall}: acts outside what vetting can see, or on other processes`,
        evidence: e.line,
      });
    else if (!ctx.info.allowedExecs.has(e.path) && !ctx.info.allowedExecs.has(canonical(e.path))) {
      v.push({
        rule: "exec",
        detail: `exec of ${e.path} (${JSON.stringify(e.argv.slice(0, 4))}): only the agent's own interpreter (${ctx.info.chain.slice(1).join(" → ") || "none"}) may be executed`,
        evidence: e.line,
      });
    }
  }
  if (run.tampered) {
    v.push({
      rule: "trace-integrity",
      detail: `${run.probe.name}: the trace was truncated or overwritten during the run (the candidate wrote to its descriptor)`,
    });
  }
  if (run.stderr.length > 0) {
    v.push({
      rule: "stderr",
      detail: `${run.probe.name}: wrote ${Buffer.byteLength(run.stderr)} bytes to stderr (a scheduler treats stderr output as a crash)`,
      evidence: run.stderr.slice(0, 500).trimEnd(),
    });
  }
  if (run.timedOut) {
    const why =
      run.cpuMs > run.limitMs
        ? `used ${Math.round(run.cpuMs)} ms of CPU time`
        : `idle: ${Math.round(run.cpuMs)} ms of CPU time in ${Math.round(run.durationMs)} ms`;
    v.push({
      rule: "timeout",
      detail: `${run.probe.name}: still running after the ${run.limitMs} ms limit (${why}); killed`,
    });
    return v; // a killed run's output says nothing
  }
  if (run.exitCode !== 0) {
    v.push({
      rule: "exit-status",
      detail: `${run.probe.name}: exited with ${run.exitCode ?? run.signal}, expected 0`,
      evidence: run.stdout.slice(0, 300),
    });
  }
  if (run.probe.name === "empty-input") v.push(...emptyInputRule(run.stdout));
  return v;
}

function fileRules(e: FileEvent, writeRoots: string[], sensitive: string[], ctx: RuleContext, v: Violation[]): void {
  const paths = [...new Set([e.path, ...(e.kernelPath !== undefined ? [e.kernelPath] : [])].map(canonical))];
  if (e.access === "write") {
    if (e.unresolved)
      v.push({
        rule: "write",
        detail: `${e.syscall} of ${e.path} relative to an unknown directory fd`,
        evidence: e.line,
      });
    else if (!paths.every((p) => isInsideAny(writeRoots, p))) {
      v.push({
        rule: "write",
        detail: `${e.syscall} ${paths[0]} (${describeFlags(e)}) outside the write roots ${writeRoots.join(", ")}`,
        evidence: e.line,
      });
    }
  }
  const hit = paths.find((p) => sensitive.some((s) => underPattern(s, p)));
  if (hit !== undefined)
    v.push({
      rule: "sensitive-read",
      detail: `${e.syscall} of sensitive path ${hit}${e.ok ? "" : ` (failed: ${e.errno ?? "?"}, still an attempt)`}`,
      evidence: e.line,
    });
  if (!ctx.gpuAllowed && paths.some((p) => matchesLibrary(ctx.policy.gpu_libraries, p))) {
    v.push({
      rule: "gpu-library",
      detail: `opened GPU/driver library ${posix.basename(paths[0]!)} at run time`,
      evidence: e.line,
    });
  }
}

function describeFlags(e: FileEvent): string {
  return e.flags.size > 0 ? [...e.flags].join("|") : e.syscall;
}

function netRules(e: NetEvent, socketDirs: string[], writeRoots: string[], v: Violation[]): void {
  if (!ALLOWED_FAMILIES.has(e.family)) {
    const what = e.op === "socket" ? `socket(${e.family})` : `${e.op} to ${e.family} ${e.address ?? ""}`.trim();
    v.push({ rule: "network", detail: `${what}: agents speak AIP-1 over Unix sockets only`, evidence: e.line });
    return;
  }
  if (e.op === "socket" || e.address === undefined) return;
  if (e.abstract) {
    v.push({
      rule: "unix-socket",
      detail: `${e.op} to abstract Unix socket ${e.address} (not a path under ${socketDirs.join(", ")})`,
      evidence: e.line,
    });
    return;
  }
  const path = canonical(e.address);
  const allowed = e.op === "bind" ? [...socketDirs, ...writeRoots] : socketDirs;
  if (!isInsideAny(allowed, path)) {
    v.push({
      rule: "unix-socket",
      detail: `${e.op} to Unix socket ${path} outside the allowed socket directories ${socketDirs.join(", ")}`,
      evidence: e.line,
    });
  }
}

/** Empty stdin must be answered with one AIP-1 error envelope of type AIP_ERR_INVALID_JSON. */
function emptyInputRule(stdout: string): Violation[] {
  const lines = stdout.split("\n").filter((l) => l.trim().length > 0);
  const bad = (detail: string): Violation[] => [{ rule: "empty-input", detail, evidence: stdout.slice(0, 300) }];
  if (lines.length !== 1) return bad(`empty stdin must be answered with exactly one JSON line, got ${lines.length}`);
  let json: unknown;
  try {
    json = JSON.parse(lines[0]!);
  } catch {
    return bad("the answer to empty stdin is not JSON");
  }
  const parsed = ResponseSchema.safeParse(json);
  if (!parsed.success) return bad("the answer to empty stdin is not an AIP-1 response envelope");
  if (parsed.data.status !== "error" || parsed.data.error.type !== "AIP_ERR_INVALID_JSON") {
    return bad(
      `empty stdin must be answered with AIP_ERR_INVALID_JSON, got ${parsed.data.status === "error" ? parsed.data.error.type : "success"}`,
    );
  }
  return [];
}
