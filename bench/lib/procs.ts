/** The processes a benchmark measures: agent-dummy, `aip up`, a bench orchestrator with a chosen pool; and their RSS. */
import { rssMiB as procRssMiB } from "../../orchestrator/core/procstat.js";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { httpRequest, waitForSocket } from "../../protocol/transport/client.js";
import { envList } from "../../protocol/util/env.js";

/** The package root, from dist/bench/lib/procs.js. */
export const ROOT = resolve(import.meta.dirname, "../../..");
export const DIST = join(ROOT, "dist");
export const DUMMY = join(DIST, "agents/dummy/main.js");
export const AIP = join(DIST, "scripts/aip.js");
export const BENCH_ORCHESTRATOR = join(DIST, "bench/lib/orchestrator-main.js");

const children = new Set<ChildProcess>();
const dirs = new Set<string>();

/** A short temp directory (socket paths stay under 107 bytes), removed by `cleanupAll`. */
export function benchDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "aipb-"));
  dirs.add(dir);
  return dir;
}

export interface Proc {
  child: ChildProcess;
  socket: string;
  /** What the process wrote to stdout so far. */
  stdout(): string;
  stop(): Promise<void>;
}

/** Spawn `node SCRIPT ARGS` (or, `binary`, `SCRIPT ARGS`), wait until `socket` accepts (and the process stays alive). */
export async function startProc(
  script: string,
  args: string[],
  socket: string,
  env: Record<string, string> = {},
  binary = false,
): Promise<Proc> {
  // AIP_BENCH_NODE_ARGS: node options for the agents a scenario starts (`--cpu-prof --cpu-prof-dir=DIR` to profile one).
  const nodeArgs = envList("AIP_BENCH_NODE_ARGS", process.env, " ") ?? [];
  const [file, argv] = binary ? [script, args] : [process.execPath, [...nodeArgs, script, ...args]];
  const child = spawn(file, argv, {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  children.add(child);
  let stderr = "";
  child.stderr!.on("data", (c: Buffer) => {
    stderr = (stderr + c.toString("utf8")).slice(-2000);
  });
  let stdout = "";
  child.stdout!.on("data", (c: Buffer) => {
    if (stdout.length < 10_000) stdout += c.toString("utf8");
  });
  let exited = false;
  child.once("exit", () => {
    exited = true;
    children.delete(child);
  });
  try {
    await waitForSocket(socket, 30_000, () => !exited);
  } catch (err) {
    child.kill("SIGKILL");
    throw new Error(`${script} did not start: ${(err as Error).message}; stderr: ${stderr}`);
  }
  return {
    child,
    socket,
    stdout: () => stdout,
    stop: () =>
      new Promise<void>((done) => {
        if (exited) return done();
        child.once("exit", () => done());
        child.kill("SIGTERM");
        setTimeout(() => child.kill("SIGKILL"), 8000).unref();
      }),
  };
}

/** agent-dummy --listen on its own socket; `dist`: another build's dist/ (AIP_BENCH_BASELINE). */
export function startDummy(dir: string, name = "dummy", dist = DIST): Promise<Proc> {
  const socket = join(dir, `${name}.sock`);
  return startProc(join(dist, "agents/dummy/main.js"), ["--listen", socket], socket, { AIP_LOG_LEVEL: "warn" });
}

/** Write an agency config for agent-dummy; `mode: "systemd"` points it at an already running agent socket. */
export function writeConfig(dir: string, name: string, mode: "embedded" | "systemd", agentSocket?: string): string {
  const file = join(dir, `${name}.json`);
  const agent = {
    name: "dummy",
    command: [DUMMY],
    manifest: join(ROOT, "manifests/dummy.json"),
    ...(agentSocket ? { socket: agentSocket } : {}),
  };
  writeFileSync(
    file,
    JSON.stringify({
      socket: join(dir, `${name}.sock`),
      agent_socket_dir: join(dir, `${name}-agents`),
      mode,
      agents: [agent],
    }),
  );
  return file;
}

/** `aip up --config FILE` as a real process, logging (info: one line per request) to a file. */
export async function startAipUp(
  dir: string,
  name: string,
  mode: "embedded" | "systemd" = "embedded",
  agentSocket?: string,
): Promise<Proc> {
  const config = writeConfig(dir, name, mode, agentSocket);
  const proc = await startProc(
    AIP,
    ["up", "--config", config, "--log", join(dir, `${name}.log`)],
    join(dir, `${name}.sock`),
  );
  await waitHealthy(proc.socket);
  return proc;
}

/**
 * The bench orchestrator (same composition as `aip up`) with a chosen pool: adaptive, fixed-N or fresh;
 * `dist`: another build's dist/ (AIP_BENCH_BASELINE), its files named after `label`.
 */
export async function startPoolOrchestrator(
  dir: string,
  pool: string,
  agentSocket: string,
  dist = DIST,
  label = pool,
): Promise<Proc> {
  const config = writeConfig(dir, `orch-${label}`, "systemd", agentSocket);
  const proc = await startProc(
    dist === DIST ? BENCH_ORCHESTRATOR : join(dist, "bench/lib/orchestrator-main.js"),
    [config, pool, join(dir, `orch-${label}.log`)],
    join(dir, `orch-${label}.sock`),
  );
  await waitHealthy(proc.socket);
  return proc;
}

/** Resolve once the orchestrator's /healthz says every agent is available. */
export async function waitHealthy(socket: string, timeoutMs = 30_000): Promise<Record<string, unknown>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await httpRequest(socket, { path: "/healthz", timeoutMs: 2000 });
      const body = JSON.parse(res.body) as Record<string, unknown>;
      if (body.status === "ok") return body;
    } catch {
      // not up yet
    }
    if (Date.now() > end) throw new Error(`${socket}: /healthz not ok within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Resident set size of a process in MiB, from /proc (0 when it is gone), to one decimal. */
export function rssMiB(pid: number): number {
  return Math.round(procRssMiB(pid) * 10) / 10;
}

/** Stop every process this run started and remove its temp directories. */
export function cleanupAll(): void {
  for (const c of children) c.kill("SIGKILL");
  children.clear();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs.clear();
}
