/**
 * Embedded-mode reload (`aip reload`, SIGHUP; docs/operations.md "Operating it"): a new orchestrator process starts
 * on the listening socket this one hands over, adopts the running agents (their output pipes are handed
 * over too), and says when it serves; then this one stops accepting, answers what it read, and exits
 * without stopping the agents. Clients see no refused connection: the socket never closes.
 */
import { spawn, type StdioOptions } from "node:child_process";
import { closeSync, writeSync } from "node:fs";
import { z } from "zod";
import type { AdoptedAgent, Handoff } from "./processes.js";
import { HANDOVER_FD_VAR } from "./sd-daemon.js";
import type { EnvName } from "../../protocol/util/env.js";

const ADOPT_VAR = "AIP_ADOPT" satisfies EnvName;
const READY_FD_VAR = "AIP_RELOAD_READY_FD" satisfies EnvName;

const AdoptSchema = z.array(
  z.object({
    name: z.string(),
    version: z.string(),
    socket: z.string(),
    pid: z.number().int().positive(),
    stdout_fd: z.number().int(),
    stderr_fd: z.number().int(),
  }),
);

/** What a predecessor handed this process (and the variables removed, so agents do not inherit them). */
export function inheritedHandover(env: NodeJS.ProcessEnv = process.env): {
  adopt: AdoptedAgent[];
  readyFd: number | undefined;
} {
  const raw = env[ADOPT_VAR];
  const readyFd = /^\d+$/.test(env[READY_FD_VAR] ?? "") ? Number(env[READY_FD_VAR]) : undefined;
  delete env[ADOPT_VAR];
  delete env[READY_FD_VAR];
  let adopt: AdoptedAgent[] = [];
  if (raw) {
    const parsed = AdoptSchema.safeParse(JSON.parse(raw));
    if (parsed.success) adopt = parsed.data;
  }
  return { adopt, readyFd };
}

/** Tell the predecessor this process serves now. */
export function signalReady(readyFd: number | undefined): void {
  if (readyFd === undefined) return;
  try {
    writeSync(readyFd, "ready\n");
    closeSync(readyFd);
  } catch {
    // the predecessor is gone: nobody to tell
  }
}

/**
 * Start the successor: this same command line, with the listening socket as fd 3, a ready pipe as fd 4
 * and each agent's stdout and stderr after it. Resolves with its pid once it serves; rejects if it exits
 * first or does not get ready within `timeoutMs`.
 */
export function startSuccessor(listenFd: number, handoffs: Handoff[], timeoutMs: number): Promise<number> {
  const adopt: AdoptedAgent[] = handoffs.map((h, i) => ({
    name: h.name,
    version: h.version,
    socket: h.socket,
    pid: h.child.pid!,
    stdout_fd: 5 + 2 * i,
    stderr_fd: 6 + 2 * i,
  }));
  const stdio: StdioOptions = [
    "ignore",
    "inherit",
    "inherit",
    listenFd,
    "pipe",
    ...handoffs.flatMap((h) => [h.child.stdout, h.child.stderr]),
  ];
  const env = { ...process.env, [HANDOVER_FD_VAR]: "3", [READY_FD_VAR]: "4", [ADOPT_VAR]: JSON.stringify(adopt) };
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], { stdio, env });
  return new Promise((resolve, reject) => {
    let said = "";
    const timer = setTimeout(() => {
      child.kill("SIGTERM");
      reject(new Error(`the new orchestrator did not get ready within ${timeoutMs} ms`));
    }, timeoutMs);
    const ready = child.stdio[4];
    ready?.on("data", (d: Buffer) => {
      said += d.toString();
      if (said.includes("ready")) {
        clearTimeout(timer);
        ready.destroy();
        child.unref();
        resolve(child.pid!);
      }
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the new orchestrator exited (${signal ?? `code ${code}`}) before it was ready`));
    });
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}
