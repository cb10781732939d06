import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { serve, START_TIMEOUT_MS, type Served } from "../tools/conformance/process.js";

export const ROOT = resolve(import.meta.dirname, "..");
export const DIST = join(ROOT, "dist");
export const DUMMY = join(DIST, "agents/dummy/main.js");

/**
 * The least deadline the suites give a request to a bundled agent. The manifests' defaults are an editor's
 * budgets, which the suite's load on two cores can exceed; a test about deadlines sets its own.
 */
export const SUITE_TIMEOUT_MS = 30_000;

/**
 * The bundled manifest of agent `name`, written into `dir` with a default deadline of at least
 * SUITE_TIMEOUT_MS; returns its path.
 */
export function suiteManifest(name: string, dir: string): string {
  const m = JSON.parse(readFileSync(join(ROOT, `manifests/${name}.json`), "utf8")) as {
    timeouts_ms: { default: number };
  };
  m.timeouts_ms.default = Math.max(m.timeouts_ms.default, SUITE_TIMEOUT_MS);
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(m));
  return file;
}

/** A short temp directory (socket paths must stay under 107 bytes); removed by the returned function. */
export function tempDir(prefix = "aipt-"): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Write `dir`/agency.json for `aip up`: its socket `dir`/aip.sock, agents' sockets in `dir`/agents, one
 * agent-dummy, and the `extra` keys (which replace these); returns the file's path.
 */
export function writeDummyConfig(dir: string, extra: Record<string, unknown> = {}): string {
  const path = join(dir, "agency.json");
  writeFileSync(
    path,
    JSON.stringify({
      socket: join(dir, "aip.sock"),
      agent_socket_dir: join(dir, "agents"),
      agents: [{ name: "dummy", command: [DUMMY], manifest: join(ROOT, "manifests/dummy.json") }],
      ...extra,
    }),
  );
  return path;
}

/** Parse JSON Lines output, skipping lines that are not JSON. */
export function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split("\n")
    .filter((l) => l.trim().startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** True while a process with this pid exists. */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Pids of the processes whose command line mentions `text` (a test's temp dir): what a test left running. */
export function processesMentioning(text: string): number[] {
  return readdirSync("/proc")
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        return readFileSync(`/proc/${e}/cmdline`, "utf8").includes(text);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Run `fn` with `env` applied to this process's environment (children inherit it); undefined unsets. */
export async function withEnv<T>(env: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  const set = (e: Record<string, string | undefined>): void => {
    for (const [k, v] of Object.entries(e)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  set(env);
  try {
    return await fn();
  } finally {
    set(saved);
  }
}

/**
 * Serve `exe --listen` on a temp socket for the enclosing suite (started in beforeAll, stopped and
 * removed in afterAll), with `env` (see withEnv) in its environment. Read `.socket` inside tests.
 */
export function servedAgent(exe: string, env: Record<string, string | undefined> = {}): { socket: string } {
  const handle = { socket: "" };
  let served: Served | undefined;
  let cleanup = (): void => undefined;
  beforeAll(async () => {
    const t = tempDir();
    cleanup = t.cleanup;
    handle.socket = join(t.dir, "agent.sock");
    served = await withEnv(env, () => serve(exe, handle.socket));
  }, START_TIMEOUT_MS + 30_000);
  afterAll(async () => {
    await served?.stop();
    cleanup();
  });
  return handle;
}

/** One NDJSON connection kept open: many requests in flight on it, each answer matched by trace_id. */
export interface NdjsonSession {
  send(request: Record<string, unknown> & { trace_id: string }): Promise<Record<string, any>>;
  /** Write raw bytes (a control line, docs/aip-1.md). */
  write(text: string): void;
  close(): void;
}

export async function ndjsonSession(socketPath: string): Promise<NdjsonSession> {
  const socket = createConnection(socketPath);
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  const waiting = new Map<string, (answer: Record<string, any>) => void>();
  let buffered = "";
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    buffered += chunk;
    let nl: number;
    while ((nl = buffered.indexOf("\n")) !== -1) {
      const answer = JSON.parse(buffered.slice(0, nl)) as Record<string, any>;
      buffered = buffered.slice(nl + 1);
      waiting.get(answer.trace_id as string)?.(answer);
    }
  });
  return {
    send: (request) =>
      new Promise((resolve) => {
        waiting.set(request.trace_id, resolve);
        socket.write(`${JSON.stringify(request)}\n`);
      }),
    write: (text) => socket.write(text),
    close: () => socket.destroy(),
  };
}

/**
 * Wait until `cond` holds (readiness, not time): it is checked every 10 ms, and the wait fails naming
 * `what` after `timeoutMs`. The one polling helper of the suites; prefer an event where there is one.
 */
export async function until(
  cond: () => boolean | Promise<boolean>,
  timeoutMs = 20_000,
  what = "condition",
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Whether bubblewrap runs here: suites of the workspace sandbox skip without it. */
export const hasBwrap = (() => {
  try {
    execFileSync("bwrap", ["--version"]);
    return true;
  } catch {
    return false;
  }
})();
