/**
 * Dynamic inspection: run the agent under `strace -f` inside the vetting sandbox (sandbox.ts) with the
 * real run's environment, HOME, TMPDIR and cwd, the given stdin and a time limit; collect stdout, stderr,
 * the exit status and the parsed trace. Judging the result is rules.ts's job. The trace goes to a file
 * outside the sandbox, reached by strace only through an inherited descriptor.
 */
import { spawn } from "node:child_process";
import { closeSync, fstatSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { killTree, treeCpuMs } from "../../../protocol/util/process-tree.js";
import type { Scratch } from "./policy.js";
import { sandboxArgs, type SandboxLayout } from "./sandbox.js";
import { TRACED_SYSCALLS, parseStrace, type TraceEvent } from "./strace.js";

/** One way of running the agent: empty stdin, `--manifest`, or (tests) a real request. */
export interface Probe {
  name: string;
  args: string[];
  stdin: string;
}

/** The two trial runs every agent gets. */
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
  /** The limit the run had: CPU time (and WALL_FACTOR times it in wall-clock time). */
  limitMs: number;
  /** CPU time the run's processes used, as last sampled. */
  cpuMs: number;
  durationMs: number;
  events: TraceEvent[];
  /** HOME, TMPDIR and cwd as the run saw them (inside the sandbox). */
  scratch: Scratch & { cwd: string };
  cleanup(): void;
  /** The trace file was truncated or overwritten while the run went on (the candidate holds its descriptor). */
  tampered: boolean;
}

export interface TraceOptions {
  strace: string;
  /** CPU-time limit per run (ms); see WALL_FACTOR. */
  timeoutMs: number;
  /** Whether `--seccomp-bpf` works here (much faster: only traced syscalls stop the tracee). */
  seccomp: boolean;
  /** The whole environment of the real run (agent-env.ts); the candidate gets exactly this. */
  env: Record<string, string>;
  /** bwrap and the layout of the real run. */
  sandbox: { bwrap: string; layout: SandboxLayout };
}

const OUTPUT_CAP = 1 << 20;

/** Runs in progress (process group → trace cleanup): if this process exits first, a hanging agent must not outlive it. */
const active = new Map<number, () => void>();
let exitHook = false;
function track(pid: number | undefined, cleanup: () => void): void {
  if (pid === undefined) return;
  active.set(pid, cleanup);
  if (exitHook) return;
  exitHook = true;
  process.once("exit", () => {
    for (const [group, clean] of active) {
      killTree(group);
      clean();
    }
  });
}

/** A run may use this many times its CPU limit in wall-clock time (an idle hang, or a loaded machine). */
export const WALL_FACTOR = 4;
const CPU_POLL_MS = 100;

/**
 * Limit a running process tree to `limitMs` of CPU time (so that a verdict does not flip with the
 * machine's load) and WALL_FACTOR times that of wall-clock time (an idle hang): past either the run is
 * killed whole (killTree) and `over` is told which. `cpuMs()` is the most CPU time seen; `stop()` ends
 * the watch.
 */
export function limitCpu(
  pid: number,
  limitMs: number,
  over: (why: "cpu" | "wall") => void,
): { stop(): void; cpuMs(): number } {
  const started = performance.now();
  let cpuMs = 0;
  const timer = setInterval(() => {
    cpuMs = Math.max(cpuMs, treeCpuMs(pid));
    const why = cpuMs > limitMs ? "cpu" : performance.now() - started > limitMs * WALL_FACTOR ? "wall" : undefined;
    if (why === undefined) return;
    clearInterval(timer);
    killTree(pid);
    over(why);
  }, CPU_POLL_MS);
  return { stop: () => clearInterval(timer), cpuMs: () => cpuMs };
}

/** Run `exe probe.args` under strace in the sandbox; never rejects for the agent's behaviour, only if bwrap cannot be spawned. */
export function traceRun(exe: string, probe: Probe, opts: TraceOptions): Promise<ProbeRun> {
  const { layout, bwrap } = opts.sandbox;
  const scratch = { home: layout.home, tmpdir: layout.tmpdir, cwd: layout.cwd };
  // The trace lives outside the sandbox (its /tmp is private): strace writes it through fd 3.
  const traceDir = mkdtempSync(join(tmpdir(), "aip-vet-trace-"));
  const traceFile = join(traceDir, "trace");
  const traceFd = openSync(traceFile, "w", 0o600);
  const cleanup = (): void => rmSync(traceDir, { recursive: true, force: true });
  const strace = [
    opts.strace,
    "-f",
    "-qq",
    ...(opts.seccomp ? ["--seccomp-bpf"] : []),
    "-s",
    "4096",
    "-y",
    "-e",
    `trace=${TRACED_SYSCALLS.join(",")}`,
    "-e",
    "signal=none",
    "-o",
    "/proc/self/fd/3",
    "--",
    exe,
    ...probe.args,
  ];
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(bwrap, sandboxArgs(layout, strace), {
      env: opts.env,
      stdio: ["pipe", "pipe", "pipe", traceFd],
      detached: true, // own process group: a timeout kills bwrap, and with it the sandbox's every process
    });
    closeSync(traceFd);
    track(child.pid, cleanup);
    const [stdin, stdout, stderr] = [child.stdin!, child.stdout!, child.stderr!];
    const out = capture(stdout);
    const err = capture(stderr);
    let timedOut = false;
    const watch = child.pid === undefined ? undefined : limitCpu(child.pid, opts.timeoutMs, () => (timedOut = true));
    child.on("error", (e) => {
      watch?.stop();
      if (child.pid !== undefined) active.delete(child.pid);
      cleanup();
      reject(e);
    });
    child.on("exit", () => {
      if (timedOut) {
        stdout.destroy();
        stderr.destroy();
      }
    });
    child.on("close", (code, signal) => {
      watch?.stop();
      if (child.pid !== undefined) active.delete(child.pid);
      let text = "";
      let tampered = false;
      try {
        const fd = openSync(traceFile, "r");
        try {
          text = readFileSync(fd, "utf8");
          tampered = fstatSync(fd).size !== Buffer.byteLength(text) || text.includes("\0");
        } finally {
          closeSync(fd);
        }
      } catch {
        // strace never started the agent: no trace
      }
      resolve({
        probe,
        exitCode: code,
        signal,
        stdout: out(),
        stderr: err(),
        timedOut,
        limitMs: opts.timeoutMs,
        cpuMs: watch?.cpuMs() ?? 0,
        durationMs: performance.now() - started,
        events: parseStrace(text, scratch.cwd),
        scratch,
        cleanup,
        tampered,
      });
    });
    stdin.on("error", () => undefined); // the agent may exit without reading stdin
    stdin.end(probe.stdin);
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
