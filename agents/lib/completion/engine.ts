/**
 * The typed engine as the agent sees it (docs/agents.md, "Type-aware completion"): a worker thread
 * holding the language services (worker.ts), asked per request with a budget. The answer comes from
 * the worker within the budget, or the caller falls back to the syntactic engine: the deadline never
 * waits on the checker. The worker's heap is capped; a worker that dies is started again on the next
 * request, and the request in flight falls back.
 */
import { Worker } from "node:worker_threads";
import { workspaceId } from "../../../protocol/util/paths.js";
import { envInt } from "../../../protocol/util/env.js";
import type { Logger } from "../../../protocol/util/log.js";
import { SERVICE_LIMITS, type ServiceStats } from "../code/service.js";
import type { TypedAnswer } from "./typed.js";
import type { DiagnoseAnswer, DiagnoseRequest } from "../diagnose/check.js";

export { workspaceId };

/** Limits of the typed engine (docs/agents.md, "Type-aware completion"); AIP_TYPED_* override them. */
export const TYPED_LIMITS = {
  /** Workspaces with a live language service; the least recently used is closed beyond this. */
  maxWorkspaces: envInt("AIP_TYPED_MAX_WORKSPACES")!,
  /** The worker's V8 old-generation heap (MiB): past it the worker dies and is started again. */
  heapMb: envInt("AIP_TYPED_HEAP_MB")!,
  /** How long a request after `expr.` waits for the checker by default before the syntactic answer (ms). */
  budgetMs: envInt("AIP_TYPED_BUDGET_MS")!,
  /**
   * The same for an identifier position (ms): the syntactic engine's names in scope are nearly as good
   * there (docs/agents.md), so a keystroke that needs a new program answers from it rather than wait for
   * the rebuild; the checker's answer, computed meanwhile, serves the keystrokes that follow.
   */
  identifierBudgetMs: envInt("AIP_TYPED_IDENTIFIER_BUDGET_MS")!,
  /**
   * At an identifier, how long the checker has alone before the syntactic answer is prepared alongside
   * it (ms): a reused list answers within it, a collection does not, and its fallback is then ready at
   * the budget instead of costing its parse after it. Off by default (any value at or over the
   * identifier budget is off): the parse shares the CPU with the checker's worker, and on a lightly
   * loaded machine it made the checker miss its budget more often (docs/agents.md).
   */
  identifierPrepareMs: envInt("AIP_TYPED_IDENTIFIER_PREPARE_MS")!,
  ...SERVICE_LIMITS,
};

export type ToWorker =
  | { kind: "stats" }
  | {
      kind: "complete";
      id: number;
      root: string;
      /** Always true: a completion stops background work. */
      interrupts: true;
      path: string;
      text: string;
      offset: number;
      limit: number;
      /** Signatures for this many of the first items (TypedItem.signature). */
      details?: number;
      /** Epoch ms after which the answer is of no use. */
      deadline: number;
    }
  | ({
      kind: "diagnose";
      id: number;
      root: string;
      /** Counted in the shared request counter: it stops background work (the other kinds are always). */
      interrupts: boolean;
    } & DiagnoseRequest);

export type FromWorker =
  | { kind: "stats"; workspaces: ServiceStats[]; heap_used_bytes: number }
  | { kind: "progress"; root: string; event: Record<string, unknown> }
  | {
      kind: "answer";
      id: number;
      status: "ok" | "stale" | "expired" | "failed";
      answer?: TypedAnswer;
      /** The answer to a "diagnose" request (agents/lib/diagnose/check.ts). */
      diagnosis?: DiagnoseAnswer;
      fallback?: string[];
      reason?: string;
    };

/** What the typed engine said: an answer, or why the syntactic engine must answer instead. */
/** The file the checker answers for: a TypeScript or JavaScript file of a workspace (none for any other request). */
export function checkedFileOf(loc: {
  root?: string | undefined;
  absPath?: string | undefined;
}): { root: string; path: string } | undefined {
  if (loc.root === undefined || loc.absPath === undefined || !/\.[cm]?[jt]sx?$/.test(loc.absPath)) return undefined;
  return { root: loc.root, path: loc.absPath };
}

export type TypedResult = { answer: TypedAnswer; fallback: string[] } | { reason: string; fallback: string[] };

export class TypedEngine {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, (r: FromWorker & { kind: "answer" }) => void>();
  /** Requests the worker has not answered yet, those given up on included (it answers in order). */
  private readonly inFlight = new Set<number>();
  private last: { workspaces: ServiceStats[]; heap_used_bytes: number } = { workspaces: [], heap_used_bytes: 0 };
  private restarts = 0;
  private log?: Logger;
  /** Workspaces whose load has ended (ready or failed) in the running worker. */
  private readonly loadedRoots = new Set<string>();

  /** Requests posted to the running worker that stop its background work (shared with it: worker.ts). */
  private posted = new Int32Array(new SharedArrayBuffer(4));

  /** Post a request; one that `interrupts` is counted first, so the worker's background check stops for it. */
  private post(w: Worker, msg: ToWorker): void {
    if (msg.kind !== "stats" && msg.interrupts) Atomics.add(this.posted, 0, 1);
    w.postMessage(msg);
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    this.posted = new Int32Array(new SharedArrayBuffer(4));
    const w = new Worker(new URL("./worker.js", import.meta.url), {
      workerData: { maxWorkspaces: TYPED_LIMITS.maxWorkspaces, requests: this.posted.buffer },
      resourceLimits: { maxOldGenerationSizeMb: TYPED_LIMITS.heapMb },
      stdout: false,
      stderr: false,
    });
    w.unref();
    w.on("message", (m: FromWorker) => {
      if (m.kind === "answer") {
        this.inFlight.delete(m.id);
        const resolve = this.pending.get(m.id);
        this.pending.delete(m.id);
        resolve?.(m);
      } else if (m.kind === "stats") {
        this.last = { workspaces: m.workspaces, heap_used_bytes: m.heap_used_bytes };
        for (const ws of m.workspaces) if (ws.state !== "loading") this.loadedRoots.add(ws.root);
      } else {
        if (m.event.phase === "ready") this.loadedRoots.add(m.root);
        if (m.event.phase === "closed") this.loadedRoots.delete(m.root);
        this.log?.info({ workspace: m.root, ...m.event }, "typed completion: workspace");
      }
    });
    const gone = (why: string): void => {
      if (this.worker !== w) return;
      this.worker = undefined;
      this.restarts++;
      this.last = { workspaces: [], heap_used_bytes: 0 };
      this.log?.warn({ reason: why }, "typed completion: the worker stopped; it starts again on the next request");
      for (const [id, resolve] of this.pending) resolve({ kind: "answer", id, status: "failed", reason: why });
      this.pending.clear();
      this.inFlight.clear();
      this.loadedRoots.clear();
    };
    w.on("error", (err) => gone(err.message));
    w.on("exit", (code) => gone(`exited with ${code}`));
    this.worker = w;
    return w;
  }

  /**
   * Ask for completions; resolves within `budgetMs` with an answer or the reason there is none. With
   * `meanwhile`, a request still unanswered after `meanwhile.afterMs` runs `meanwhile.run()` on this
   * thread while the worker goes on (the caller prepares its own answer, in parallel rather than after
   * the budget). With `extend`, a request still unanswered after `budgetMs` waits on until
   * `extend.untilMs` (from the start) when the worker is still busy with an earlier request, or when
   * `extend.worthIt()` says so at that moment (the answer the caller has instead is costly).
   */
  async complete(
    req: { root: string; path: string; text: string; offset: number; limit: number; details?: number },
    budgetMs: number,
    log?: Logger,
    extend?: { untilMs: number; worthIt: () => boolean },
    meanwhile?: { afterMs: number; run: () => void },
  ): Promise<TypedResult> {
    if (log) this.log = log;
    const worker = this.start();
    const id = this.nextId++;
    const reply = new Promise<FromWorker & { kind: "answer" }>((resolve) => this.pending.set(id, resolve));
    const limitMs = Math.max(budgetMs, extend?.untilMs ?? 0);
    const t0 = performance.now();
    this.inFlight.add(id);
    this.post(worker, { kind: "complete", id, interrupts: true, ...req, deadline: Date.now() + limitMs });
    let timer: NodeJS.Timeout | undefined;
    const wait = (ms: number) => new Promise<undefined>((resolve) => (timer = setTimeout(resolve, ms, undefined)));
    let r: (FromWorker & { kind: "answer" }) | undefined;
    if (meanwhile && meanwhile.afterMs < budgetMs) {
      r = await Promise.race([reply, wait(meanwhile.afterMs)]);
      clearTimeout(timer);
      if (!r) meanwhile.run();
    }
    if (!r) {
      r = await Promise.race([reply, wait(Math.max(0, budgetMs - (performance.now() - t0)))]);
      clearTimeout(timer);
    }
    // Still queued behind an earlier request (one that fell back while its list was being collected):
    // that list serves this keystroke as soon as it is done, so the wait is worth it whatever the fallback costs.
    const queued = !r && [...this.inFlight].some((other) => other < id);
    if (!r && extend && limitMs > budgetMs && (queued || extend.worthIt())) {
      const more = limitMs - budgetMs;
      budgetMs = limitMs;
      r = await Promise.race([reply, wait(more)]);
      clearTimeout(timer);
    }
    const fallback = this.last.workspaces.find((w) => w.root === req.root)?.fallback ?? [];
    if (!r) {
      this.pending.delete(id);
      const ws = this.last.workspaces.find((w) => w.root === req.root);
      return {
        reason:
          ws === undefined || ws.state === "loading"
            ? `the checker is still loading this workspace (budget ${budgetMs} ms)`
            : `the checker did not answer within the budget (${budgetMs} ms)`,
        fallback,
      };
    }
    if (r.status === "ok") return { answer: r.answer!, fallback: r.fallback ?? fallback };
    return {
      reason: r.status === "failed" ? `the checker failed: ${r.reason}` : `the checker's answer was ${r.status}`,
      fallback,
    };
  }

  /**
   * Diagnose a file through the same per-workspace checker (agents/lib/diagnose/check.ts): resolves
   * within `budgetMs` with the diagnosis or the reason there is none; within `loadingMs` when the
   * workspace is still loading (the request stays queued, so the load goes on and warms the checker).
   */
  async diagnose(
    req: { root: string } & DiagnoseRequest,
    budgetMs: number,
    log?: Logger,
    loadingMs = budgetMs,
  ): Promise<{ diagnosis: DiagnoseAnswer; fallback: string[] } | { reason: string; fallback: string[] }> {
    if (log) this.log = log;
    if (!this.loadedRoots.has(req.root)) budgetMs = Math.min(budgetMs, loadingMs);
    const worker = this.start();
    const id = this.nextId++;
    const reply = new Promise<FromWorker & { kind: "answer" }>((resolve) => this.pending.set(id, resolve));
    this.inFlight.add(id);
    // A request for the whole file lets the background check of it go on (it answers from it).
    this.post(worker, { kind: "diagnose", id, interrupts: req.coverage !== "file", ...req });
    let timer: NodeJS.Timeout | undefined;
    const r = await Promise.race([
      reply,
      new Promise<undefined>((resolve) => (timer = setTimeout(resolve, budgetMs, undefined))),
    ]);
    clearTimeout(timer);
    const ws = this.last.workspaces.find((w) => w.root === req.root);
    const fallback = r?.fallback ?? ws?.fallback ?? [];
    if (!r) {
      this.pending.delete(id);
      return {
        reason:
          ws === undefined || ws.state === "loading"
            ? `the checker is still loading this workspace (waited ${budgetMs} ms)`
            : `the checker did not answer within ${budgetMs} ms`,
        fallback,
      };
    }
    if (r.status === "ok" && r.diagnosis) return { diagnosis: r.diagnosis, fallback };
    return {
      reason: r.status === "failed" ? `the checker failed: ${r.reason}` : `the checker's answer was ${r.status}`,
      fallback,
    };
  }

  /** For /healthz: limits, workspaces open, the worker's heap. */
  health(): Record<string, unknown> {
    this.worker?.postMessage({ kind: "stats" } satisfies ToWorker);
    return {
      typed: {
        worker: this.worker ? "running" : "idle",
        restarts: this.restarts,
        heap_used_bytes: this.last.heap_used_bytes,
        limits: {
          max_workspaces: TYPED_LIMITS.maxWorkspaces,
          heap_mb: TYPED_LIMITS.heapMb,
          budget_ms: TYPED_LIMITS.budgetMs,
          identifier_budget_ms: TYPED_LIMITS.identifierBudgetMs,
          max_files: TYPED_LIMITS.maxFiles,
          max_bytes: TYPED_LIMITS.maxBytes,
        },
        // No client's path on /healthz: a workspace is named by a digest of its root.
        workspaces: this.last.workspaces.map((w) => ({
          workspace: workspaceId(w.root),
          state: w.state,
          files: w.files,
          bytes: w.bytes,
          ...(w.load_ms !== undefined ? { load_ms: w.load_ms } : {}),
          scope: w.scope,
          ...(w.workspace_ms !== undefined ? { workspace_ms: w.workspace_ms } : {}),
          fallback: w.fallback,
          rebuilds: w.rebuilds,
          stale_answers: w.stale_answers,
        })),
      },
    };
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    if (w) await w.terminate();
  }
}
