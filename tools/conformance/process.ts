/** Running an agent executable for the conformance kit: one-shot runs and socket-mode servers. */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitForSocket } from "../../protocol/transport/client.js";

export interface OneShotResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/**
 * How long a one-shot run may take before it is killed and reported as not exiting: a hang detector, wide
 * enough for an agent that loads a model and answers with it on a busy host.
 */
export const ONE_SHOT_TIMEOUT_MS = 60_000;

/**
 * How long a socket-mode agent may take to listen: a hang detector too (an agent that exits is reported at
 * once), wide enough for a model load and warm-up on a busy host.
 */
export const START_TIMEOUT_MS = 60_000;

/** Run `exe args` with `stdin` written and closed; collect stdout/stderr as written; kill after `timeoutMs`. */
export async function runOnce(
  exe: string,
  args: string[],
  stdin: string | Buffer,
  timeoutMs = ONE_SHOT_TIMEOUT_MS,
): Promise<OneShotResult> {
  // Loaded here, not at the top: the test suites import this module for serve() in every file, and most
  // never run an agent one-shot.
  const { execa } = await import("execa");
  const r = await execa(exe, args, {
    input: stdin,
    timeout: timeoutMs,
    killSignal: "SIGKILL",
    reject: false,
    stripFinalNewline: false,
    maxBuffer: 64 << 20,
  });
  // A program that cannot be started at all is the caller's error, as spawn's was.
  if (r.exitCode === undefined && r.signal === undefined && !r.timedOut && r.cause instanceof Error) throw r.cause;
  return {
    code: r.exitCode ?? null,
    signal: (r.signal as NodeJS.Signals | undefined) ?? null,
    stdout: r.stdout,
    stderr: r.stderr,
    timedOut: r.timedOut,
  };
}

/** A short private directory for sockets (Unix socket paths are limited to 107 bytes). */
export function socketDir(prefix = "aipk-"): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface Served {
  child: ChildProcess;
  socketPath: string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Servers started by `serve` and not yet exited. They are killed when this process exits: a caller that
 * gave up on a start (a test hook's timeout on a starved host) never gets the `Served` to stop, and the
 * agent would outlive it.
 */
const running = new Set<ChildProcess>();
let killOnExit = false;

/** Start `exe --listen socketPath` and wait until the socket accepts connections. */
export async function serve(exe: string, socketPath: string, timeoutMs = START_TIMEOUT_MS): Promise<Served> {
  const child = spawn(exe, ["--listen", socketPath], { stdio: ["ignore", "pipe", "pipe"] });
  running.add(child);
  if (!killOnExit) {
    killOnExit = true;
    process.on("exit", () => {
      for (const c of running) c.kill("SIGKILL");
    });
  }
  const err: Buffer[] = [];
  child.stdout!.resume(); // drain logs: a full pipe would block the agent
  child.stderr!.on("data", (c: Buffer) => err.push(c));
  let alive = true;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on("exit", (code, signal) => {
      alive = false;
      running.delete(child);
      resolve({ code, signal });
    });
  });
  const served: Served = {
    child,
    socketPath,
    stderr: () => Buffer.concat(err).toString("utf8"),
    exited,
    stop: async () => {
      if (alive) child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
  try {
    await waitForSocket(socketPath, timeoutMs, () => alive);
  } catch (e) {
    await served.stop();
    throw new Error(`${(e as Error).message}${served.stderr() ? `; stderr: ${served.stderr().slice(0, 500)}` : ""}`);
  }
  return served;
}
