/**
 * One request through the orchestrator: validate, route, queue for a pool slot, forward with the
 * remaining budget, check the agent's answer, and account for it. Never throws.
 */
import { setMaxListeners } from "node:events";
import { AipError, isAipError } from "../protocol/errors.js";
import { errorResponse } from "../protocol/envelope.js";
import {
  ErrorResponseSchema,
  SuccessResponseSchema,
  formatIssues,
  type AipRequest,
  type AipResponse,
} from "../protocol/schemas.js";
import { AGENT_LIMITS } from "../protocol/limits.js";
import { isValidTraceId, newTraceId } from "../protocol/trace.js";
import { traceIdOf, validateRequest } from "../protocol/validate.js";
import type { AgentRecord } from "./agent.js";
import { neverReachedAgent } from "./pool/transport.js";

export interface RequestOutcome {
  trace_id: string;
  action: string;
  agent: string | null;
  version: string | null;
  /** "success" or the error code. */
  outcome: string;
  /** The failure is the agent's or ours (5xx), not the client's. */
  server_error: boolean;
  timings_ms: Record<string, number>;
  /** A model-backed answer's token accounting (complete's `inference`, summarize's `model`). */
  model?: ModelAccounting;
}

export interface ModelAccounting {
  prompt_tokens: number;
  kv_reused_tokens: number;
  generated_tokens: number;
  inference_ms: number;
}

const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0);

/**
 * The token accounting a model-backed agent puts in its payload (docs/agents.md "Model-backed completion"):
 * agent-complete's `prompt.tokens` + `inference` (its attempts' `inference_ms`), summarize's `model`.
 */
export function modelAccounting(response: AipResponse): ModelAccounting | undefined {
  if (response.status !== "success" || typeof response.payload !== "object" || response.payload === null)
    return undefined;
  const p = response.payload as Record<string, unknown>;
  const inference = p.inference as Record<string, unknown> | undefined;
  if (inference && typeof inference === "object") {
    const attempts = Array.isArray(inference.attempts) ? (inference.attempts as Record<string, unknown>[]) : [];
    return {
      prompt_tokens: num((p.prompt as Record<string, unknown> | undefined)?.tokens),
      kv_reused_tokens: num(inference.kv_reused_tokens),
      generated_tokens: num(inference.generated_tokens),
      inference_ms: attempts.reduce((sum, a) => sum + num(a.inference_ms), 0),
    };
  }
  const model = p.model as Record<string, unknown> | undefined;
  if (model && typeof model === "object" && "generated_tokens" in model) {
    return {
      prompt_tokens: num(model.prompt_tokens),
      kv_reused_tokens: num(model.kv_reused_tokens),
      generated_tokens: num(model.generated_tokens),
      inference_ms: num(model.inference_ms),
    };
  }
  return undefined;
}

export interface ForwardDeps {
  /** Pick the agent for a validated request (throws NO_ROUTE / UNAVAILABLE). */
  select(request: AipRequest, traceId: string): AgentRecord;
  /** A call failed in a way that counts against the agent's circuit. */
  onAgentFailure(agent: AgentRecord, code: string): void;
  onAgentSuccess(agent: AgentRecord): void;
  onOutcome(outcome: RequestOutcome): void;
  /** Latest wins: cancel the earlier request for the same document; returns the cleanup. */
  supersede?(request: AipRequest, traceId: string, controller: AbortController): () => void;
  /** The client connection the request came on: pool slots are shared fairly between connections. */
  connection?: number;
}

const ms = (since: number): number => Math.round((performance.now() - since) * 1000) / 1000;

/** Failures that are the agent's fault and count towards opening its circuit. */
const AGENT_FAULTS = new Set(["AIP_ERR_AGENT_CRASHED", "AIP_ERR_BAD_AGENT_RESPONSE"]);

export async function forward(value: unknown, clientSignal: AbortSignal, deps: ForwardDeps): Promise<AipResponse> {
  const t0 = performance.now();
  const timings: Record<string, number> = {};
  let traceId = traceIdOf(value) ?? newTraceId();
  let agent: AgentRecord | undefined;
  let action = typeof (value as { action?: unknown })?.action === "string" ? (value as { action: string }).action : "";

  const finish = (response: AipResponse): AipResponse => {
    timings.total = ms(t0);
    response.timings_ms = { ...timings, ...prefixed(response.timings_ms) };
    if (agent) {
      response.agent ??= agent.name;
      response.version ??= agent.version;
    }
    const code = response.status === "success" ? "success" : response.error.type;
    const model = modelAccounting(response);
    deps.onOutcome({
      trace_id: traceId,
      action,
      agent: agent?.name ?? null,
      version: agent?.version ?? null,
      outcome: code,
      server_error: response.status === "error" && response.error.status >= 500,
      timings_ms: timings,
      ...(model ? { model } : {}),
    });
    return response;
  };

  let request: AipRequest;
  try {
    request = validateRequest(value);
    traceId = request.trace_id ?? traceId;
    action = request.action;
    agent = deps.select(request, traceId);
  } catch (err) {
    timings.route = ms(t0);
    return finish(errorResponse(err, traceId));
  }
  timings.route = ms(t0);

  const timeoutMs = request.constraints.timeout_ms ?? agent.manifest.timeouts_ms.default;
  const deadline = Date.now() + timeoutMs;
  const controller = new AbortController();
  setMaxListeners(64, controller.signal);
  const onClientAbort = (): void => controller.abort(new AipError("AIP_ERR_CANCELLED", "Client closed the connection"));
  if (clientSignal.aborted) onClientAbort();
  clientSignal.addEventListener("abort", onClientAbort, { once: true });
  const timer = setTimeout(
    () =>
      controller.abort(
        new AipError("AIP_ERR_TIMEOUT", `No answer from ${agent!.name} within ${timeoutMs} ms`, {
          extensions: { timeout_ms: timeoutMs },
        }),
      ),
    timeoutMs,
  );

  const unclaim = deps.supersede?.(request, traceId, controller);
  const tQueue = performance.now();
  let release: (() => void) | undefined;
  try {
    release = await agent.pool.acquire(deadline, controller.signal, deps.connection);
    timings.queue = ms(tQueue);
    agent.beginRequest();
    const tAgent = performance.now();
    try {
      const response = await call(agent, request, traceId, deadline, controller.signal);
      timings.agent = ms(tAgent);
      agent.pool.record(timings.agent);
      if (response.status === "error" && AGENT_FAULTS.has(response.error.type))
        deps.onAgentFailure(agent, response.error.type);
      else deps.onAgentSuccess(agent);
      return finish(response);
    } finally {
      agent.endRequest();
    }
  } catch (err) {
    timings.queue ??= ms(tQueue);
    const failure = isAipError(err) ? err : new AipError("AIP_ERR_UNKNOWN", "Forwarding failed");
    if (AGENT_FAULTS.has(failure.code)) deps.onAgentFailure(agent, failure.code);
    return finish(errorResponse(failure, traceId, { agent: agent.name, version: agent.version }));
  } finally {
    release?.();
    unclaim?.();
    clearTimeout(timer);
    clientSignal.removeEventListener("abort", onClientAbort);
  }
}

/** Send to the agent (one retry if the request never reached it) and check its answer. */
async function call(
  agent: AgentRecord,
  request: AipRequest,
  traceId: string,
  deadline: number,
  signal: AbortSignal,
): Promise<AipResponse> {
  const body = (): string => {
    const text = JSON.stringify({
      ...request,
      trace_id: traceId,
      constraints: { ...request.constraints, timeout_ms: Math.max(1, deadline - Date.now()) },
    });
    // Re-encoding can lengthen the request (numbers such as 1e20 are written out); agents accept the
    // front door's limit plus FORWARD_HEADROOM_BYTES. Beyond that it is the request's size, not the agent.
    const bytes = Buffer.byteLength(text);
    if (bytes > AGENT_LIMITS.maxBodyBytes) {
      throw new AipError(
        "AIP_ERR_PAYLOAD_TOO_LARGE",
        `The request re-encoded for the agent is ${bytes} bytes, over the agents' limit of ${AGENT_LIMITS.maxBodyBytes} (numbers are written out in full: 1e20 takes 21 digits)`,
        {
          suggestion: "Send less, or write numbers in their plain form",
          extensions: { limit: AGENT_LIMITS.maxBodyBytes, bytes },
        },
      );
    }
    return text;
  };
  let reply;
  try {
    try {
      reply = await agent.pool.send(body(), signal);
    } catch (err) {
      if (signal.aborted || !neverReachedAgent(err)) throw err;
      reply = await agent.pool.send(body(), signal);
    }
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    if (isAipError(err)) throw err; // the request itself was refused before sending
    if (neverReachedAgent(err)) {
      throw new AipError(
        "AIP_ERR_UNAVAILABLE",
        `Agent ${agent.name} is not accepting connections (${(err as { code?: string }).code})`,
      );
    }
    throw new AipError(
      "AIP_ERR_AGENT_CRASHED",
      `Agent ${agent.name} closed the connection before answering (${(err as { code?: string }).code ?? (err as Error).message})`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(reply.body);
  } catch {
    throw new AipError(
      "AIP_ERR_BAD_AGENT_RESPONSE",
      `Agent ${agent.name} answered with non-JSON (HTTP ${reply.statusCode}): ${JSON.stringify(reply.body.slice(0, 120))}`,
    );
  }
  const checked = checkAnswer(json);
  if (typeof checked === "string")
    throw new AipError("AIP_ERR_BAD_AGENT_RESPONSE", `Agent ${agent.name} broke the AIP-1 envelope: ${checked}`);
  if (checked.trace_id !== traceId && checked.status === "error" && checked.error.status < 500) {
    // The agent refused the request before it could read its trace id (too large, not JSON to it): the
    // request's fault, answered as such, never the agent's (its circuit is not touched).
    return { ...checked, trace_id: traceId };
  }
  if (checked.trace_id !== traceId) {
    throw new AipError(
      "AIP_ERR_BAD_AGENT_RESPONSE",
      `Agent ${agent.name} answered trace_id ${checked.trace_id}, expected ${traceId}`,
    );
  }
  return checked;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The agent's answer checked against the AIP-1 envelope (protocol/schemas.ts ResponseSchema) field by
 * field, without walking the payload, which is the agent's and passes through as it came
 * (docs/performance.md). Rare parts (a problem, warnings) go through their zod schemas. Returns the
 * response, or what is wrong with it.
 */
export function checkAnswer(json: unknown): AipResponse | string {
  if (!isObject(json)) return "the answer is not a JSON object";
  const { status, trace_id: traceId, agent, version, timings_ms: timings } = json;
  if (status !== "success" && status !== "error") return `status: expected "success" or "error"`;
  if (!isValidTraceId(traceId)) return "trace_id: expected 1-128 characters of A-Z a-z 0-9 . _ : -";
  if (agent !== undefined && typeof agent !== "string") return "agent: expected a string";
  if (version !== undefined && typeof version !== "string") return "version: expected a string";
  if (timings !== undefined) {
    if (!isObject(timings)) return "timings_ms: expected an object";
    for (const k in timings) {
      const v = timings[k];
      if (typeof v !== "number" || !(v >= 0)) return `timings_ms.${k}: expected a non-negative number`;
    }
  }
  const rare = status === "error" ? ErrorResponseSchema.shape.error.safeParse(json.error) : undefined;
  if (rare && !rare.success) return issues(rare.error, "error");
  if (status === "success" && json.warnings !== undefined) {
    const w = SuccessResponseSchema.shape.warnings.safeParse(json.warnings);
    if (!w.success) return issues(w.error, "warnings");
  }
  return json as AipResponse;
}

function issues(error: Parameters<typeof formatIssues>[0], at: string): string {
  return formatIssues(error)
    .map((e) => `${at}${e.path && e.path !== "(root)" ? `.${e.path}` : ""}: ${e.message}`)
    .join("; ");
}

/** The agent's own stage timings, kept beside the orchestrator's as "agent.<stage>". */
function prefixed(timings: Record<string, number> | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(timings ?? {})) out[`agent.${k}`] = v;
  return out;
}
