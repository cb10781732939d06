/**
 * Dynamic inspection: run the agent under `strace -f` with a scratch HOME, TMPDIR and cwd, a minimal
 * environment, the given stdin and a time limit; collect stdout, stderr, the exit status and the parsed
 * trace. Judging the result is rules.ts's job. The scratch directories are removed by the caller after
 * judging (paths are resolved against them first).
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Scratch } from "./policy.js";
import { TRACED_SYSCALLS, parseStrace, type TraceEvent } from "./strace.js";

/** One way of running the agent: empty stdin, `--manifest`, or (tests) a real request. */
export interface Probe {
  name: string;
  args: string[];
  stdin: string;
}

/** The two runs the issue asks for. */
export const DEFAULT_PROBES: Probe[] = [
  { name: "empty-input", args: [], stdin: "" },
  { name: "manifest", args: ["--manifest"], stdin: "" },
];

export interface ProbeRun {
  probe: Probe;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** The limit the run had. */
  limitMs: number;
  durationMs: number;
  events: TraceEvent[];
  /** The scratch directories this run used (still present until `cleanup`). */
  scratch: Scratch & { cwd: string };
  cleanup(): void;
}

export interface TraceOptions {
  strace: string;
  timeoutMs: number;
  /** Whether `--seccomp-bpf` works here (much faster: only traced syscalls stop the tracee). */
  seccomp: boolean;
  /** PATH for the agent (its interpreter is looked up on it). */
  pathEnv: string;
  /** Extra environment; PATH, HOME and TMPDIR are always the ones above and the scratch ones. */
  env?: Record<string, string>;
}

const OUTPUT_CAP = 1 << 20;

/** Runs in progress (process group → scratch cleanup): if this process exits first, a hanging agent must not outlive it. */
const active = new Map<number, () => void>();
let exitHook = false;
function track(pid: number | undefined, cleanup: () => void): void {
  if (pid === undefined) return;
  active.set(pid, cleanup);
  if (exitHook) return;
  exitHook = true;
  process.once("exit", () => {
    for (const [group, clean] of active) {
      try {
        process.kill(-group, "SIGKILL");
      } catch {
        // already gone
      }
      clean();
    }
  });
}

/** Run `exe probe.args` under strace; never rejects for the agent's behaviour, only if strace cannot be spawned. */
export function traceRun(exe: string, probe: Probe, opts: TraceOptions): Promise<ProbeRun> {
  const base = mkdtempSync(join(tmpdir(), "aip-vet-"));
  const scratch = { home: join(base, "home"), tmpdir: join(base, "tmp"), cwd: join(base, "cwd") };
  for (const d of [scratch.home, scratch.tmpdir, scratch.cwd]) mkdirSync(d, { mode: 0o700 });
  // The trace lives outside the agent's scratch tree, so that nothing it does there reads as its own.
  const traceDir = mkdtempSync(join(tmpdir(), "aip-vet-trace-"));
  const traceFile = join(traceDir, "trace");
  const cleanup = (): void => {
    rmSync(base, { recursive: true, force: true });
    rmSync(traceDir, { recursive: true, force: true });
  };
  const args = [
    "-f", "-qq", ...(opts.seccomp ? ["--seccomp-bpf"] : []), "-s", "4096", "-y",
    "-e", `trace=${TRACED_SYSCALLS.join(",")}`, "-e", "signal=none", "-o", traceFile, "--", exe, ...probe.args,
  ];
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(opts.strace, args, {
      cwd: scratch.cwd,
      env: { ...opts.env, PATH: opts.pathEnv, HOME: scratch.home, TMPDIR: scratch.tmpdir },
      stdio: ["pipe", "pipe", "pipe"],
      detached: true, // own process group: a timeout kills strace and every tracee together
    });
    track(child.pid, cleanup);
    const out = capture(child.stdout);
    const err = capture(child.stderr);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killAll(child.pid, traceFile, scratch.home);
    }, opts.timeoutMs);
    child.on("error", (e) => {
      clearTimeout(timer);
      if (child.pid !== undefined) active.delete(child.pid);
      cleanup();
      reject(e);
    });
    child.on("exit", () => {
      // A tracee that escaped the group may still hold the pipes: after a timeout, stop waiting for them.
      if (timedOut) {
        child.stdout.destroy();
        child.stderr.destroy();
      }
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (child.pid !== undefined) active.delete(child.pid);
      let text = "";
      try {
        text = readFileSync(traceFile, "utf8");
      } catch {
        // strace never started the agent: no trace
      }
      resolve({
        probe, exitCode: code, signal, stdout: out(), stderr: err(), timedOut, limitMs: opts.timeoutMs,
        durationMs: performance.now() - started, events: parseStrace(text, scratch.cwd), scratch, cleanup,
      });
    });
    child.stdin.on("error", () => undefined); // the agent may exit without reading stdin
    child.stdin.end(probe.stdin);
  });
}

function capture(stream: NodeJS.ReadableStream): () => string {
  const chunks: Buffer[] = [];
  let size = 0;
  stream.on("data", (c: Buffer) => {
    if (size < OUTPUT_CAP) chunks.push(c);
    size += c.length;
  });
  return () => Buffer.concat(chunks).toString("utf8").slice(0, OUTPUT_CAP);
}

/** SIGKILL strace's process group, then any traced process that left it (setsid) but still runs with our scratch HOME. */
function killAll(pid: number | undefined, traceFile: string, home: string): void {
  if (pid !== undefined) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  let pids: Set<number>;
  try {
    pids = new Set(readFileSync(traceFile, "utf8").split("\n").map((l) => Number(/^(\d+)\s/.exec(l)?.[1])).filter((n) => n > 0));
  } catch {
    return;
  }
  const marker = `HOME=${home}\0`;
  for (const p of pids) {
    try {
      if (!readdirSync(`/proc/${p}`).includes("environ")) continue;
      if (!readFileSync(`/proc/${p}/environ`, "utf8").includes(marker)) continue;
      process.kill(p, "SIGKILL");
    } catch {
      // exited meanwhile
    }
  }
}
