/** One request through an agent: validation, action routing, deadline, concurrency cap, envelope. */
import { getHeapStatistics } from "node:v8";
import { Cancellation, follow, unfollow } from "../../../protocol/transport/cancel.js";
import { AipError, problem, type ErrorCode } from "../../../protocol/contract/errors.js";
import { errorResponse, successResponse } from "../../../protocol/contract/envelope.js";
import type { Logger } from "../../../protocol/util/log.js";
import type { AipResponse } from "../../../protocol/contract/schemas.js";
import { newTraceId } from "../../../protocol/contract/trace.js";
import { traceIdOf, validateRequest } from "../../../protocol/contract/validate.js";
import { heapGrowingPercent, setHeapGrowingPercent } from "./heap.js";
import { StageTimer } from "./timer.js";
import type { AgentDefinition, HandlerContext, Warnings } from "./types.js";
import { Deadlines, type Expiring } from "../../../protocol/util/deadlines.js";

/** The heap in use and its limit, in bytes (V8's; the limit follows --max-old-space-size). */
export interface HeapProbe {
  used(): number;
  limit(): number;
  /** A full garbage collection, where the process allows it (`--expose-gc`, set by the orchestrator). */
  collect?: () => void;
  /** How far the heap may grow between full collections (heap.ts). */
  setGrowth?: (percent: number) => void;
}

const exposedGc = (globalThis as { gc?: () => void }).gc;

/** How long a reading of the heap in use is reused: V8's heap statistics cost microseconds a call. */
const HEAP_READING_MS = 2;
let heapUsed = 0;
let heapReadAt = -Infinity;
/** The heap limit is fixed at start (--max-old-space-size). */
let heapLimit = 0;

export const v8Heap: HeapProbe = {
  used: () => {
    const now = performance.now();
    if (now - heapReadAt > HEAP_READING_MS) {
      heapUsed = getHeapStatistics().used_heap_size;
      heapReadAt = now;
    }
    return heapUsed;
  },
  limit: () => (heapLimit ||= getHeapStatistics().heap_size_limit),
  setGrowth: setHeapGrowingPercent,
  ...(exposedGc
    ? {
        collect: () => {
          exposedGc();
          heapReadAt = -Infinity;
        },
      }
    : {}),
};

/** New requests are refused (AIP_ERR_SOCKET_BUSY) while the heap is above this share of its limit (docs/operations.md, Supervisor). */
export const SHED_HEAP_RATIO = 0.85;
/** After a request leaves the heap above this share of its limit, a full collection gives the memory back. */
export const COLLECT_AFTER_RATIO = 0.5;
/** At most one forced collection per this long. */
const COLLECT_EVERY_MS = 1000;

const clientGone = (): Error => new AipError("AIP_ERR_CANCELLED", "Client closed the connection");

/** A RangeError from V8 running out of stack: deep recursion over deeply nested input. */
export function isStackOverflow(err: unknown): boolean {
  return err instanceof RangeError && /Maximum call stack size exceeded/.test(err.message);
}

export class AgentInvoker {
  private inflightCount = 0;
  private lastCollect = 0;

  constructor(
    private readonly def: AgentDefinition,
    private readonly log: Logger,
    private readonly heap: HeapProbe = v8Heap,
  ) {
    for (const action of Object.keys(def.handlers)) {
      if (!def.manifest.capabilities.includes(action)) {
        throw new Error(
          `Handler for "${action}" is not among the manifest's capabilities (${def.manifest.capabilities.join(", ")})`,
        );
      }
    }
  }

  get inflight(): number {
    return this.inflightCount;
  }

  /** A full collection, at most once per COLLECT_EVERY_MS; whether one ran. */
  private collect(): boolean {
    const now = Date.now();
    if (!this.heap.collect || now - this.lastCollect < COLLECT_EVERY_MS) return false;
    this.lastCollect = now;
    this.heap.collect();
    this.tuneHeapGrowth();
    return true;
  }

  /**
   * Let the heap grow between V8's full collections as far as fits under COLLECT_AFTER_RATIO of its
   * limit from what is in use now (heap.ts): at start, and after each forced collection, when what is in
   * use is what is live.
   */
  tuneHeapGrowth(): void {
    const limit = this.heap.limit();
    this.heap.setGrowth?.(heapGrowingPercent(this.heap.used(), limit, COLLECT_AFTER_RATIO * limit));
  }

  /** Answer one decoded request; never throws. `clientSignal` fires when the caller goes away. */
  async invoke(value: unknown, clientSignal?: AbortSignal): Promise<AipResponse> {
    const timer = new StageTimer();
    const { name: agent, version } = this.def.manifest;
    let traceId = traceIdOf(value) ?? newTraceId();
    const fail = (err: unknown): AipResponse =>
      errorResponse(err, traceId, { agent, version, timings_ms: timer.toJSON() });
    let request;
    try {
      request = validateRequest(value);
    } catch (err) {
      return fail(err);
    }
    traceId = request.trace_id ?? traceId;
    const handler = Object.hasOwn(this.def.handlers, request.action) ? this.def.handlers[request.action] : undefined;
    if (!handler) {
      return fail(
        new AipError(
          "AIP_ERR_NO_ROUTE",
          `Agent ${agent} does not serve action "${request.action}"; it serves ${Object.keys(this.def.handlers).join(", ")}`,
        ),
      );
    }
    if (this.inflightCount >= this.def.manifest.max_concurrent) {
      return fail(
        new AipError(
          "AIP_ERR_SOCKET_BUSY",
          `Agent ${agent} is at its limit of ${this.def.manifest.max_concurrent} concurrent requests`,
        ),
      );
    }
    let used = this.heap.used();
    const limit = this.heap.limit();
    // Garbage counts as used until collected: collect once before refusing.
    if (used > SHED_HEAP_RATIO * limit && this.collect()) used = this.heap.used();
    if (used > SHED_HEAP_RATIO * limit) {
      // Shed before the heap limit is reached: a busy answer the caller retries, not an out-of-memory crash.
      return fail(
        new AipError(
          "AIP_ERR_SOCKET_BUSY",
          `Agent ${agent} is short of memory: heap ${mib(used)} of its ${mib(limit)} MiB limit in use`,
          {
            extensions: { heap_used_mib: mib(used), heap_limit_mib: mib(limit) },
          },
        ),
      );
    }
    const timeoutMs = request.constraints.timeout_ms ?? this.def.manifest.timeouts_ms.default;
    const call = new Call(traceId, agent, timeoutMs, this.log, timer);
    // The client going away: the connection's signal has one listener for all its requests (protocol/transport/cancel.ts).
    if (clientSignal) follow(clientSignal, call, clientGone);
    timer.mark("accept");
    this.inflightCount++;
    try {
      if (call.reason) {
        // The client left before the handler started: it never runs.
        this.inflightCount--;
        throw call.reason;
      }
      // One promise per request: the handler's outcome, the deadline or a cancellation, whichever is first.
      const payload = await new Promise<unknown>((resolve, reject) => {
        call.resolve = resolve;
        call.reject = reject;
        deadlines.add(call);
        let work: Promise<unknown>;
        try {
          work = Promise.resolve(handler(request, call));
        } catch (err) {
          work = Promise.reject(err as Error);
        }
        // A late outcome after a timeout or a cancellation is already answered: resolve/reject are no-ops then.
        work.then(
          (value) => {
            this.done(call);
            resolve(value);
          },
          (err: unknown) => {
            this.done(call);
            reject(err as Error);
          },
        );
      });
      timer.mark("handler");
      return successResponse(payload, traceId, { agent, version, timings_ms: timer.toJSON(), warnings: call.warnings });
    } catch (err) {
      timer.mark("handler");
      if (isStackOverflow(err)) {
        call.log.warn({ event: "stack_overflow", action: request.action }, "input nested too deeply: stack overflow");
        return fail(
          new AipError(
            "AIP_ERR_TOO_COMPLEX",
            `Agent ${agent} ran out of stack processing this input: it nests too deeply (brackets, functions or chained operators)`,
          ),
        );
      }
      if (!(err instanceof AipError)) call.log.error({ event: "handler_error", err }, "handler threw");
      return fail(err);
    } finally {
      if (clientSignal) unfollow(clientSignal, call);
    }
  }

  /** The handler settled: it no longer counts against the concurrency cap, and its deadline is gone. */
  private done(call: Call): void {
    deadlines.delete(call);
    this.inflightCount--;
    if (this.heap.used() > COLLECT_AFTER_RATIO * this.heap.limit()) setImmediate(() => this.collect());
  }
}

/** Every request's deadline in this process, behind one timer (protocol/util/deadlines.ts). */
const deadlines = new Deadlines();

/**
 * One request's handler context and cancellation: its deadline (one shared timer, protocol/util/deadlines.ts),
 * its client going away, and the AbortSignal a handler gets when it first reads `signal` (most never
 * do). Methods rather than closures: nothing is allocated per request that the request does not use
 * (docs/performance.md, "The orchestrator hop").
 */
class Call extends Cancellation implements HandlerContext, Expiring {
  readonly deadline: number;
  readonly expiresAt: number;
  readonly warnings: Warnings = [];
  resolve: ((value: unknown) => void) | undefined;
  reject: ((reason: Error) => void) | undefined;
  private controller: AbortController | undefined;
  private requestLog: Logger | undefined;

  constructor(
    readonly traceId: string,
    private readonly agent: string,
    private readonly timeoutMs: number,
    private readonly agentLog: Logger,
    readonly timer: StageTimer,
  ) {
    super();
    this.deadline = Date.now() + timeoutMs;
    this.expiresAt = performance.now() + timeoutMs;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.reason) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  /** The request's logger, made when a handler first logs: most requests never do. */
  get log(): Logger {
    return (this.requestLog ??= this.agentLog.child({ trace_id: this.traceId }));
  }

  remainingMs(): number {
    return Math.max(0, this.deadline - Date.now());
  }

  warn(code: ErrorCode, detail: string, extensions?: Record<string, unknown>): void {
    this.warnings.push(problem(code, { detail, instance: this.traceId, ...(extensions ? { extensions } : {}) }));
  }

  expire(): void {
    this.abort(
      new AipError("AIP_ERR_TIMEOUT", `Agent ${this.agent} did not answer within ${this.timeoutMs} ms`, {
        extensions: { timeout_ms: this.timeoutMs },
      }),
    );
  }

  /** The deadline passed or the client went away: the handler's signal fires and the request is answered. */
  override abort(reason: Error): void {
    if (this.aborted) return;
    super.abort(reason);
    deadlines.delete(this);
    this.controller?.abort(reason);
    this.reject?.(reason);
  }
}

function mib(bytes: number): number {
  return Math.round(bytes / 1024 / 1024);
}
