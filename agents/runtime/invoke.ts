/** One request through an agent: validation, action routing, deadline, concurrency cap, envelope. */
import { AipError, problem } from "../../protocol/errors.js";
import { errorResponse, successResponse } from "../../protocol/envelope.js";
import type { Logger } from "../../protocol/log.js";
import type { AipResponse } from "../../protocol/schemas.js";
import { newTraceId } from "../../protocol/trace.js";
import { traceIdOf, validateRequest } from "../../protocol/validate.js";
import { StageTimer } from "./timer.js";
import type { AgentDefinition, HandlerContext, Warnings } from "./types.js";

export class AgentInvoker {
  private inflightCount = 0;

  constructor(
    private readonly def: AgentDefinition,
    private readonly log: Logger,
  ) {
    for (const action of Object.keys(def.handlers)) {
      if (!def.manifest.capabilities.includes(action)) {
        throw new Error(`Handler for "${action}" is not among the manifest's capabilities (${def.manifest.capabilities.join(", ")})`);
      }
    }
  }

  get inflight(): number {
    return this.inflightCount;
  }

  /** Answer one decoded request; never throws. `clientSignal` fires when the caller goes away. */
  async invoke(value: unknown, clientSignal?: AbortSignal): Promise<AipResponse> {
    const timer = new StageTimer();
    const { name: agent, version } = this.def.manifest;
    let traceId = traceIdOf(value) ?? newTraceId();
    const fail = (err: unknown): AipResponse => errorResponse(err, traceId, { agent, version, timings_ms: timer.toJSON() });
    let request;
    try {
      request = validateRequest(value);
    } catch (err) {
      return fail(err);
    }
    traceId = request.trace_id ?? traceId;
    const handler = Object.hasOwn(this.def.handlers, request.action) ? this.def.handlers[request.action] : undefined;
    if (!handler) {
      return fail(new AipError("AIP_ERR_NO_ROUTE", `Agent ${agent} does not serve action "${request.action}"; it serves ${Object.keys(this.def.handlers).join(", ")}`));
    }
    if (this.inflightCount >= this.def.manifest.max_concurrent) {
      return fail(new AipError("AIP_ERR_SOCKET_BUSY", `Agent ${agent} is at its limit of ${this.def.manifest.max_concurrent} concurrent requests`));
    }
    const timeoutMs = request.constraints.timeout_ms ?? this.def.manifest.timeouts_ms.default;
    const deadline = Date.now() + timeoutMs;
    const controller = new AbortController();
    const onClientAbort = (): void => controller.abort(new AipError("AIP_ERR_CANCELLED", "Client closed the connection"));
    if (clientSignal?.aborted) onClientAbort();
    clientSignal?.addEventListener("abort", onClientAbort, { once: true });
    const warnings: Warnings = [];
    const log = this.log.child({ trace_id: traceId });
    const ctx: HandlerContext = {
      traceId,
      signal: controller.signal,
      deadline,
      remainingMs: () => Math.max(0, deadline - Date.now()),
      timer,
      log,
      warn: (code, detail, extensions) => warnings.push(problem(code, { detail, instance: traceId, ...(extensions ? { extensions } : {}) })),
    };
    timer.mark("accept");
    this.inflightCount++;
    let timeout: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timeout = setTimeout(() => {
        const err = new AipError("AIP_ERR_TIMEOUT", `Agent ${agent} did not answer within ${timeoutMs} ms`, { extensions: { timeout_ms: timeoutMs } });
        controller.abort(err);
        reject(err);
      }, timeoutMs);
    });
    const cancelled = new Promise<never>((_, reject) => {
      controller.signal.addEventListener("abort", () => reject(controller.signal.reason as Error), { once: true });
    });
    const work = Promise.resolve()
      .then(() => handler(request, ctx))
      .finally(() => {
        this.inflightCount--;
      });
    try {
      const payload = await Promise.race([work, expired, cancelled]);
      timer.mark("handler");
      return successResponse(payload, traceId, { agent, version, timings_ms: timer.toJSON(), warnings });
    } catch (err) {
      if (!(err instanceof AipError)) log.error({ event: "handler_error", err }, "handler threw");
      timer.mark("handler");
      return fail(err);
    } finally {
      clearTimeout(timeout);
      clientSignal?.removeEventListener("abort", onClientAbort);
      work.catch(() => undefined); // a late rejection after a timeout is already answered
    }
  }
}
