/**
 * Running a workspace's code (its test runner, its config files, its package scripts): only when the
 * workspace is trusted (trust.ts), and then only inside bubblewrap (docs/security.md, "Workspace
 * runs"). The sandbox is built from nothing rather than from a copy of the host: the system's /usr,
 * /etc (files others may not read masked), the interpreter's install, the workspace read-only at its
 * own path, a private /tmp and HOME, no network, new user/pid/ipc/uts/cgroup namespaces mapped to
 * nobody, no capabilities, no agency sockets or state. Generated files are written to a private
 * directory and mounted at their workspace paths; the directories along their paths are private
 * writable copies (tmpfs), so nothing is ever written into the real workspace. CPU time, wall time,
 * memory and output are limited; an abort or a limit kills the whole process tree at once and the
 * private directory is removed.
 */
import { spawn, execFile } from "node:child_process";
import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, normalize, resolve, sep } from "node:path";
import { findBwrap, INSTALL_BWRAP, which } from "../../../protocol/util/bwrap.js";
import { SANDBOX_HIDE_ENV } from "../../../protocol/util/trust-env.js";
import { refuseWorkspaceRoot, workspaceRootsFromEnv } from "../../../protocol/util/workspace-roots.js";
import {
  killTree,
  stillRunning,
  subtreeTable,
  tree,
  treeCpuMs,
  treeRssKb,
} from "../../../protocol/util/process-tree.js";
import { workspaceTrust, type TrustDecision } from "./trust.js";

export { workspaceTrust, type TrustDecision };

export interface WorkspaceRun {
  workspaceRoot: string;
  argv: string[];
  /** Relative to the workspace root. */
  cwd?: string;
  /** Generated files, root-relative: written to a private writable copy, never the real workspace. */
  files?: Record<string, string>;
  /** The run's whole environment besides PATH, HOME, TMPDIR and LANG defaults; nothing of the agent's is inherited. */
  env?: Record<string, string>;
  /** Wall-clock limit; the CPU-time limit is the same figure. */
  timeoutMs: number;
  /** Resident memory of the whole tree (default DEFAULT_MEMORY_MB). */
  memoryMb?: number;
  /** Processes (and, through RLIMIT_NPROC, threads) the run may have at once (default DEFAULT_MAX_PROCESSES). */
  maxProcesses?: number;
  signal?: AbortSignal;
  /** Per stream (default DEFAULT_MAX_OUTPUT_BYTES); the rest is read and dropped. */
  maxOutputBytes?: number;
  /** Further host paths the run needs to read (an interpreter installed outside /usr): bound read-only. */
  readOnlyPaths?: string[];
  /** Paths inside the workspace to hide behind empty directories (added to AIP_SANDBOX_HIDE's). */
  hide?: string[];
  /**
   * Give the run a writable directory at OUTPUT_DIR (a report file, recorded values) whose regular
   * files come back in the result's `outputs`, each cut at maxOutputBytes.
   */
  collect?: boolean;
  /**
   * Root-relative directories the run may write into: each becomes a private writable copy (a tmpfs
   * holding read-only binds of the real entries), as the directories of `files` do.
   */
  writable?: string[];
}

export type WorkspaceRunResult =
  | {
      status: "ran";
      exitCode: number | null;
      signal: string | null;
      timedOut: boolean;
      stdout: string;
      stderr: string;
      durationMs: number;
      /** Why the run was killed, when it was. */
      killed?: Killed;
      /** With `collect`: the files the run left in OUTPUT_DIR, by name. */
      outputs?: Record<string, string>;
    }
  | { status: "skipped"; reason: string; hint: string };

export type Skipped = Extract<WorkspaceRunResult, { status: "skipped" }>;

/** Why a run was stopped before it ended. */
export type Killed = "timeout" | "cpu" | "memory" | "processes" | "cancelled";

export const DEFAULT_MEMORY_MB = 2048;
/**
 * Processes of one run (a test runner and its workers): RLIMIT_NPROC inside the sandbox, which the
 * kernel counts per sandbox (its user namespace) with threads included, and the watchdog's count of
 * the run's process tree, which also holds where RLIMIT_NPROC does not (an agency running as root).
 */
export const DEFAULT_MAX_PROCESSES = 512;
/** Where a `collect` run may write the files that come back (inside the sandbox). */
export const OUTPUT_DIR = "/tmp/aip-out";
export const DEFAULT_MAX_OUTPUT_BYTES = 1 << 20;
/** Size of each private tmpfs (/tmp, the writable workspace directories). */
export const TMPFS_MB = 256;
/** The unprivileged user the sandbox maps to. */
export const SANDBOX_UID = 65534;
const POLL_MS = 25;
/** How long a killed run waits for its SIGKILLed processes to be gone before it answers anyway. */
const SETTLE_MAX_MS = 2000;
const SYSTEM_DIRS = ["/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];
const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

const skipped = (reason: string, hint: string): Skipped => ({ status: "skipped", reason, hint });

let probed: Promise<string | undefined> | undefined;

/** undefined when bwrap can build the sandbox here, else why not. A success is remembered. */
function probeSandbox(bwrap: string): Promise<string | undefined> {
  if (probed) return probed;
  const p = new Promise<string | undefined>((done) => {
    execFile(bwrap, [...baseArgs(), "--", "/usr/bin/true"], { timeout: 10_000 }, (err, _out, stderr) =>
      done(err ? (String(stderr).trim() || err.message).slice(0, 500) : undefined),
    );
  });
  probed = p;
  void p.then((r) => {
    if (r !== undefined) probed = undefined;
  });
  return p;
}

function baseArgs(): string[] {
  const args = [
    "--unshare-all",
    "--unshare-user",
    "--uid",
    String(SANDBOX_UID),
    "--gid",
    String(SANDBOX_UID),
    "--disable-userns",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--hostname",
    "sandbox",
    "--ro-bind",
    "/usr",
    "/usr",
  ];
  for (const d of SYSTEM_DIRS.slice(2)) {
    let st;
    try {
      st = lstatSync(d);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) args.push("--symlink", readlinkSync(d), d);
    else if (st.isDirectory()) args.push("--ro-bind", d, d);
  }
  args.push("--ro-bind", "/etc", "/etc", ...maskEtc(), "--proc", "/proc", "--dev", "/dev");
  args.push("--size", String(TMPFS_MB << 20), "--tmpfs", "/tmp", "--dir", "/tmp/home");
  return args;
}

/** /etc entries (two levels) others may not read (shadow, private keys): hidden inside the sandbox. */
function maskEtc(): string[] {
  const out: string[] = [];
  const walk = (dir: string, depth: number): void => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const n of names) {
      const p = join(dir, n);
      let st;
      try {
        st = lstatSync(p);
      } catch {
        continue;
      }
      if (st.isSymbolicLink()) continue;
      if ((st.mode & 0o004) === 0) {
        if (st.isDirectory()) out.push("--tmpfs", p);
        else out.push("--ro-bind", "/dev/null", p);
      } else if (st.isDirectory() && depth < 2) walk(p, depth + 1);
    }
  };
  walk("/etc", 1);
  return out;
}

function isInside(parent: string, child: string): boolean {
  return child === parent || child.startsWith(parent.endsWith(sep) ? parent : parent + sep);
}

/** A root-relative path that stays inside the root, or undefined. */
function relInside(rel: string): string | undefined {
  if (rel === "" || isAbsolute(rel) || rel.includes("\0")) return undefined;
  const n = normalize(rel);
  if (n === ".." || n.startsWith(`..${sep}`)) return undefined;
  return n === "." ? "" : n.replace(/\/+$/, "");
}

/**
 * Top-level entries of the workspace that are symlinks to directories inside the allowed workspace
 * roots (a linked node_modules): their targets are bound read-only, so that the link works inside the
 * sandbox. A link anywhere else stays dangling there.
 */
function linkedTargets(root: string): string[] {
  const allowed = workspaceRootsFromEnv();
  const out: string[] = [];
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return out;
  }
  for (const n of names) {
    const p = join(root, n);
    try {
      if (!lstatSync(p).isSymbolicLink()) continue;
      const real = realpathSync(p);
      if (statSync(real).isDirectory() && refuseWorkspaceRoot(real, allowed) === undefined) out.push(real);
    } catch {
      // dangling: stays so
    }
  }
  return out;
}

/** The host install an executable outside the system directories belongs to (its prefix), to bind read-only. */
function installOf(exe: string, pathEnv: string): string[] {
  const found = exe.includes("/") ? exe : which(exe, pathEnv);
  if (!found || !isAbsolute(found)) return [];
  let realExe = found;
  try {
    realExe = realpathSync(found);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const p of [found, realExe]) {
    if (SYSTEM_DIRS.some((d) => isInside(d, p))) continue;
    const bin = dirname(p);
    out.push(bin.endsWith("/bin") ? dirname(bin) : bin);
  }
  return out;
}

/**
 * The workspace as the sandbox sees it: read-only at its own path; where generated files go, each
 * directory on their way is a private tmpfs holding read-only binds of the real entries, plus the files.
 */
function workspaceArgs(root: string, files: Map<string, string>, hide: string[], writable: string[] = []): string[] {
  if (files.size === 0 && writable.length === 0) return ["--ro-bind", root, root, ...hideArgs(root, hide)];
  const dirs = new Set<string>([root]);
  for (const start of [
    ...[...files.keys()].map((rel) => dirname(join(root, rel))),
    ...writable.map((w) => join(root, w)),
  ]) {
    let d = start;
    while (isInside(root, d) && !dirs.has(d)) {
      dirs.add(d);
      d = dirname(d);
    }
  }
  const targets = new Set([...files.keys()].map((rel) => join(root, rel)));
  const args: string[] = [];
  for (const d of [...dirs].sort((a, b) => a.length - b.length)) {
    args.push("--size", String(TMPFS_MB << 20), "--tmpfs", d);
    let names: string[] = [];
    try {
      names = statSync(d).isDirectory() ? readdirSync(d) : [];
    } catch {
      names = [];
    }
    for (const n of names) {
      const p = join(d, n);
      if (dirs.has(p) || targets.has(p)) continue;
      let st;
      try {
        st = lstatSync(p);
      } catch {
        continue;
      }
      // A symlink is recreated as a symlink: bwrap would follow it on the host, outside the workspace.
      if (st.isSymbolicLink()) args.push("--symlink", readlinkSync(p), p);
      else if (st.isDirectory() || st.isFile()) args.push("--ro-bind", p, p);
    }
  }
  for (const [rel, host] of files) args.push("--ro-bind", host, join(root, rel));
  return [...args, ...hideArgs(root, hide)];
}

function hideArgs(root: string, hide: string[]): string[] {
  const out: string[] = [];
  for (const h of hide) {
    if (!isAbsolute(h) || !isInside(root, h) || h === root) continue;
    try {
      if (lstatSync(h).isDirectory()) out.push("--tmpfs", h);
      else out.push("--ro-bind", "/dev/null", h);
    } catch {
      // nothing there to hide
    }
  }
  return out;
}

/** A sandbox ready to start: bwrap's arguments, the environment, and the private directory to remove. */
interface Prepared {
  bwrap: string;
  args: string[];
  env: Record<string, string>;
  outDir: string;
  cleanup: () => void;
  limitKb: number;
  maxProcesses: number;
}

/** Everything short of starting the sandbox: trust, bubblewrap, the generated files, the arguments. */
async function prepare(run: WorkspaceRun, cpuMs: number): Promise<Prepared | Skipped> {
  const trust = workspaceTrust(run.workspaceRoot);
  if (!trust.trusted) return skipped("skipped: workspace not trusted", trust.hint);
  if (run.argv.length === 0 || run.argv.some((a) => a.includes("\0")))
    return skipped("skipped: nothing to run", "argv must name a program");
  let root: string;
  try {
    root = realpathSync(run.workspaceRoot);
    if (!statSync(root).isDirectory()) throw new Error("not a directory");
  } catch {
    return skipped("skipped: workspace root is not a directory", `check ${run.workspaceRoot}`);
  }
  const cwdRel = run.cwd === undefined ? "" : relInside(run.cwd === "" ? "." : run.cwd);
  if (cwdRel === undefined) return skipped("skipped: cwd outside the workspace", "cwd must be root-relative");
  const bwrap = findBwrap();
  if (!bwrap) return skipped("skipped: bubblewrap not found", `install it: ${INSTALL_BWRAP}`);
  const unable = await probeSandbox(bwrap);
  if (unable !== undefined)
    return skipped(
      "skipped: bubblewrap cannot build the sandbox here",
      `${unable}; allow unprivileged user namespaces, or run the agency where they are allowed`,
    );
  if (run.signal?.aborted) return skipped("skipped: cancelled", "the request was cancelled before the run started");

  const priv = mkdtempSync(join(tmpdir(), "aip-run-"));
  const cleanup = (): void => rmSync(priv, { recursive: true, force: true });
  const files = new Map<string, string>();
  try {
    let i = 0;
    for (const [rel, text] of Object.entries(run.files ?? {})) {
      const r = relInside(rel);
      if (r === undefined || r === "") {
        cleanup();
        return skipped("skipped: generated file outside the workspace", `${rel} must be root-relative`);
      }
      const host = join(priv, `f${i++}`);
      writeFileSync(host, text, { flag: "wx", mode: 0o644 });
      files.set(r, host);
    }
  } catch (e) {
    cleanup();
    return skipped("skipped: cannot write the generated files", (e as Error).message);
  }

  const env: Record<string, string> = {
    PATH: DEFAULT_PATH,
    HOME: "/tmp/home",
    TMPDIR: "/tmp",
    LANG: "C.UTF-8",
    ...run.env,
  };
  const hide = [
    ...(process.env[SANDBOX_HIDE_ENV] ?? "").split(":").filter((p) => isAbsolute(p)),
    ...(run.hide ?? []),
  ].map((p) => resolve(p));
  const readOnly = [...installOf(run.argv[0]!, env.PATH!), ...linkedTargets(root), ...(run.readOnlyPaths ?? [])].filter(
    (p) => isAbsolute(p) && !SYSTEM_DIRS.some((d) => isInside(d, p)),
  );
  const cpuSeconds = Math.max(1, Math.ceil(cpuMs / 1000));
  const args = [...baseArgs()];
  for (const p of [...new Set(readOnly)].sort((a, b) => a.length - b.length)) args.push("--ro-bind-try", p, p);
  const writable = (run.writable ?? []).map((w) => relInside(w === "" ? "." : w));
  if (writable.some((w) => w === undefined)) {
    cleanup();
    return skipped("skipped: writable directory outside the workspace", "writable directories must be root-relative");
  }
  args.push(...workspaceArgs(root, files, hide, writable as string[]));
  const outDir = join(priv, "out");
  if (run.collect) {
    mkdirSync(outDir, { mode: 0o700 });
    args.push("--bind", outDir, OUTPUT_DIR);
  }
  args.push("--chdir", join(root, cwdRel));
  const maxProcesses = run.maxProcesses ?? DEFAULT_MAX_PROCESSES;
  args.push(
    "--",
    "/usr/bin/prlimit",
    `--cpu=${cpuSeconds}`,
    "--core=0",
    `--fsize=${TMPFS_MB << 20}`,
    `--nproc=${maxProcesses}`,
    "--",
  );
  args.push(...run.argv);
  return { bwrap, args, env, outDir, cleanup, limitKb: (run.memoryMb ?? DEFAULT_MEMORY_MB) * 1024, maxProcesses };
}

/** Run `argv` in the workspace, trusted and sandboxed, or say why it did not run. Never rejects. */
export async function runWorkspaceCode(run: WorkspaceRun): Promise<WorkspaceRunResult> {
  const prepared = await prepare(run, run.timeoutMs);
  if ("status" in prepared) return prepared;
  const { bwrap, args, env, outDir, cleanup, limitKb, maxProcesses } = prepared;
  const cap = run.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const started = performance.now();
  return new Promise<WorkspaceRunResult>((done) => {
    const child = spawn(bwrap, args, { env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    const pid = child.pid;
    let killed: Killed | undefined;
    let victims: number[] = [];
    const kill = (why: typeof killed): void => {
      if (killed !== undefined || pid === undefined) return;
      killed = why;
      victims = killTree(pid);
    };
    const out = capture(child.stdout, cap);
    const err = capture(child.stderr, cap);
    const onAbort = (): void => kill("cancelled");
    run.signal?.addEventListener("abort", onAbort, { once: true });
    const wall = setTimeout(() => kill("timeout"), run.timeoutMs);
    const poll = setInterval(() => {
      if (pid === undefined) return;
      const table = subtreeTable(pid);
      if (treeCpuMs(pid, table) > run.timeoutMs) kill("cpu");
      else if (treeRssKb(pid, table) > limitKb) kill("memory");
      // bwrap, its init and prlimit's program are the run's first three processes.
      else if (tree(table, pid).length > maxProcesses + 2) kill("processes");
    }, POLL_MS);
    if (pid !== undefined) live.add(pid);
    let finished = false;
    const finish = (r: WorkspaceRunResult): void => {
      if (finished) return;
      finished = true;
      clearTimeout(wall);
      clearInterval(poll);
      run.signal?.removeEventListener("abort", onAbort);
      if (pid !== undefined) live.delete(pid);
      if (run.collect && r.status === "ran") r.outputs = readOutputs(outDir, cap);
      cleanup();
      // A killed run answers once its processes are gone, so that it counts as running until then.
      const settle = (waited: number): void => {
        if (stillRunning(victims).length === 0 || waited >= SETTLE_MAX_MS) done(r);
        else setTimeout(() => settle(waited + POLL_MS), POLL_MS);
      };
      settle(0);
    };
    child.on("error", (e) => finish(skipped("skipped: bubblewrap could not start", e.message)));
    child.on("exit", () => {
      // A killed sandbox's grandchildren may still hold the pipes: stop reading them.
      if (killed !== undefined) {
        child.stdout.destroy();
        child.stderr.destroy();
      }
    });
    child.on("close", (code, sig) =>
      finish({
        status: "ran",
        exitCode: code,
        signal: sig,
        timedOut: killed === "timeout" || killed === "cpu",
        stdout: out(),
        stderr: err(),
        durationMs: performance.now() - started,
        ...(killed !== undefined ? { killed } : {}),
      }),
    );
  });
}

/** A long-lived sandboxed process (see startWorkspaceProcess). */
export interface WorkspaceProcessSpec extends Omit<WorkspaceRun, "timeoutMs" | "collect" | "signal"> {
  /** CPU time of the whole tree over the process's life; past it the process is killed. */
  cpuLimitMs: number;
}

export interface WorkspaceProcess {
  pid: number;
  /** Write requests here. */
  stdin: NodeJS.WritableStream;
  /** Called with each line the process writes to stdout. */
  onLine(listener: (line: string) => void): void;
  /** The last of what it wrote to stderr (for a failure's reason). */
  stderrTail(): string;
  /** Settles when the process has ended and its private directory is removed. */
  ended: Promise<{ code: number | null; signal: string | null; killed?: Killed }>;
  /** Kill the whole tree at once. */
  kill(why?: Killed): void;
}

/** How often a long-lived process's tree is checked against its limits. */
const LONG_POLL_MS = 250;

/**
 * Start a process that stays up between requests (a warm test runner), in the same sandbox as
 * runWorkspaceCode, with stdin and stdout as its request and answer channels: only in a trusted
 * workspace, never rejects. Its memory, process count and CPU time over its life are limited; the
 * caller bounds each request and kills the process when one does not answer in time.
 */
export async function startWorkspaceProcess(spec: WorkspaceProcessSpec): Promise<WorkspaceProcess | Skipped> {
  const prepared = await prepare({ ...spec, timeoutMs: spec.cpuLimitMs }, spec.cpuLimitMs);
  if ("status" in prepared) return prepared;
  const { bwrap, args, env, cleanup, limitKb, maxProcesses } = prepared;
  const cap = spec.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const child = spawn(bwrap, args, { env, stdio: ["pipe", "pipe", "pipe"], detached: true });
  const pid = child.pid;
  if (pid === undefined) {
    cleanup();
    return skipped("skipped: bubblewrap could not start", "the sandbox's process did not start");
  }
  live.add(pid);
  let killed: Killed | undefined;
  let victims: number[] = [];
  const kill = (why: Killed = "cancelled"): void => {
    if (killed !== undefined) return;
    killed = why;
    victims = killTree(pid);
  };
  const poll = setInterval(() => {
    const table = subtreeTable(pid);
    if (treeCpuMs(pid, table) > spec.cpuLimitMs) kill("cpu");
    else if (treeRssKb(pid, table) > limitKb) kill("memory");
    else if (tree(table, pid).length > maxProcesses + 2) kill("processes");
  }, LONG_POLL_MS);
  poll.unref();
  const listeners: ((line: string) => void)[] = [];
  let pending = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    pending += chunk;
    let at;
    while ((at = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, at);
      pending = pending.slice(at + 1);
      for (const l of listeners) l(line);
    }
    // A line longer than the output cap is cut: nothing the caller reads may grow without bound.
    if (pending.length > cap) pending = "";
  });
  let tail = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    tail = (tail + chunk).slice(-4096);
  });
  child.stdin.on("error", () => undefined);
  const ended = new Promise<{ code: number | null; signal: string | null; killed?: Killed }>((done) => {
    child.on("exit", () => {
      if (killed !== undefined) {
        child.stdout.destroy();
        child.stderr.destroy();
      }
    });
    child.on("close", (code, sig) => {
      clearInterval(poll);
      live.delete(pid);
      cleanup();
      const settle = (waited: number): void => {
        if (stillRunning(victims).length === 0 || waited >= SETTLE_MAX_MS)
          done({ code, signal: sig, ...(killed !== undefined ? { killed } : {}) });
        else setTimeout(() => settle(waited + POLL_MS), POLL_MS);
      };
      settle(0);
    });
  });
  return {
    pid,
    stdin: child.stdin,
    onLine: (l) => void listeners.push(l),
    stderrTail: () => tail,
    ended,
    kill,
  };
}

/** Sandboxes still running: killed if this process exits first. */
const live = new Set<number>();
process.once("exit", () => {
  for (const pid of live) killTree(pid);
});

/** The regular files directly in `dir` (never through a link), each cut at `cap` bytes. */
function readOutputs(dir: string, cap: number): Record<string, string> {
  const out: Record<string, string> = {};
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const n of names.slice(0, 64)) {
    let fd: number | undefined;
    try {
      fd = openSync(join(dir, n), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      if (!fstatSync(fd).isFile()) continue;
      const buf = Buffer.alloc(Math.min(cap, fstatSync(fd).size));
      const len = readSync(fd, buf, 0, buf.length, 0);
      out[n] = buf.subarray(0, len).toString("utf8");
    } catch {
      // unreadable: left out
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }
  return out;
}

function capture(stream: NodeJS.ReadableStream, cap: number): () => string {
  const chunks: Buffer[] = [];
  let size = 0;
  stream.on("data", (c: Buffer) => {
    if (size < cap) chunks.push(c.subarray(0, cap - size));
    size += c.length;
  });
  stream.on("error", () => undefined);
  return () => Buffer.concat(chunks).toString("utf8");
}
