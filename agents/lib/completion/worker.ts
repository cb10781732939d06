/**
 * The typed completion engine's worker thread (docs/agents.md, "Type-aware completion"): one language
 * service per workspace, the least recently used closed beyond TYPED_LIMITS.maxWorkspaces. The agent's
 * event loop never waits on the checker: it sends a request here and answers from the syntactic engine
 * when no answer comes within its budget (engine.ts).
 */
import { parentPort, workerData } from "node:worker_threads";
import { WorkspaceService } from "../code/service.js";
import { prepareUsage, priorPoints } from "./member-rank.js";
import { typedCompletions } from "./typed.js";
import { diagnoseFile } from "../diagnose/check.js";
import type { ToWorker, FromWorker } from "./engine.js";
import { ts } from "../code/typescript.js";

const port = parentPort!;
priorPoints("", undefined); // the prior's table, parsed before the first request needs it
const { maxWorkspaces, requests } = workerData as { maxWorkspaces: number; requests: SharedArrayBuffer };
/** Requests posted that may interrupt background work (counted by the engine before it posts each). */
const posted = new Int32Array(requests);
let received = 0;
/** True while such a request waits for this thread. */
const waiting = (): boolean => Atomics.load(posted, 0) !== received;

/**
 * Work done after an answer, off every request's path (the whole file's check after a region
 * answer): one job at a time, the newest; it stops at once when a request arrives (TypeScript's
 * checker polls the service's cancellation token) and is then dropped.
 */
let backgroundJob: (() => void) | undefined;
function inBackground(svc: WorkspaceService, run: () => void): void {
  const job = (): void => {
    if (backgroundJob !== job) return;
    backgroundJob = undefined;
    if (waiting()) return;
    svc.interrupt = waiting;
    try {
      run();
    } catch (err) {
      if (!(err instanceof ts.OperationCanceledException))
        post({ kind: "progress", root: svc.root, event: { phase: "background", error: (err as Error).message } });
    } finally {
      svc.interrupt = () => false;
    }
  };
  backgroundJob = job;
  setImmediate(job);
}
/** Least recently used first. */
const services = new Map<string, WorkspaceService>();
/** The newest request per workspace: an older one still waiting for the load is answered "stale". */
const newest = new Map<string, number>();

function post(message: FromWorker): void {
  port.postMessage(message);
}

function stats(): FromWorker & { kind: "stats" } {
  const mem = process.memoryUsage();
  return {
    kind: "stats",
    workspaces: [...services.values()].map((s) => s.stats()),
    heap_used_bytes: mem.heapUsed,
  };
}

/** The workspace's service; a new one's first program is rooted at `first`, the file asked about (service.ts). */
function serviceFor(root: string, first: { path: string; text: string }): WorkspaceService {
  let svc = services.get(root);
  if (svc) {
    services.delete(root);
    services.set(root, svc);
    return svc;
  }
  while (services.size >= maxWorkspaces) {
    const [oldest, old] = services.entries().next().value as [string, WorkspaceService];
    services.delete(oldest);
    old.dispose();
    post({ kind: "progress", root: oldest, event: { phase: "closed", reason: "least recently used" } });
  }
  svc = new WorkspaceService(root, (event) => post({ kind: "progress", root, event }), [first]);
  services.set(root, svc);
  return svc;
}

port.on("message", (msg: ToWorker) => {
  if (msg.kind !== "stats" && msg.interrupts) received++;
  void (async () => {
    if (msg.kind === "stats") return post(stats());
    const svc = serviceFor(msg.root, msg);
    // Only a newer completion makes an older one stale: a diagnosis is of a file, not of a keystroke.
    if (msg.kind === "complete") newest.set(msg.root, msg.id);
    await svc.loaded;
    // A file outside the open files' program (not held) waits for the whole workspace's, which holds its imports.
    if (svc.scope === "open" && svc.textOf(msg.path) === undefined) await svc.grown;
    if (msg.kind === "complete" && newest.get(msg.root) !== msg.id)
      return post({ kind: "answer", id: msg.id, status: "stale" });
    if (msg.kind === "complete" && Date.now() > msg.deadline)
      return post({ kind: "answer", id: msg.id, status: "expired" });
    if (svc.state !== "ready")
      return post({ kind: "answer", id: msg.id, status: "failed", reason: svc.fallback.at(-1) ?? "" });
    if (msg.kind === "diagnose") {
      try {
        const diagnosis = diagnoseFile(svc, msg);
        post({ kind: "answer", id: msg.id, status: "ok", diagnosis, fallback: svc.fallback });
        // After a region answer, the whole file: its diagnostics and fixes' checks are kept with the
        // program, so the next request on this text answers them at once.
        if (diagnosis.coverage === "region")
          inBackground(svc, () => {
            if (svc.textOf(msg.path) !== msg.text) return;
            diagnoseFile(svc, {
              path: msg.path,
              text: msg.text,
              coverage: "file",
              deadline: Date.now() + 60_000,
              ...(msg.verify !== undefined ? { verify: msg.verify } : {}),
              ...(msg.verifyBudgetMs !== undefined ? { verifyBudgetMs: msg.verifyBudgetMs } : {}),
            });
          });
      } catch (err) {
        post({ kind: "answer", id: msg.id, status: "failed", reason: (err as Error).message });
      }
      svc.refreshInBackground();
      return post(stats());
    }
    prepareUsage(svc);
    try {
      const answer = typedCompletions(svc, msg.path, msg.text, msg.offset, msg.limit, msg.details ?? 0);
      post({ kind: "answer", id: msg.id, status: "ok", answer, fallback: svc.fallback });
    } catch (err) {
      post({ kind: "answer", id: msg.id, status: "failed", reason: (err as Error).message });
    }
    svc.tidy();
    svc.refreshInBackground();
    post(stats());
  })();
});
