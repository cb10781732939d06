/**
 * One request through the orchestrator: validate, route, queue for a pool slot, forward with the
 * remaining budget, check the agent's answer, and account for it. Never throws.
 */
import { AipError, isAipError } from "../../protocol/contract/errors.js";
import { errorResponse, setResponseText } from "../../protocol/contract/envelope.js";
import {
  ErrorResponseSchema,
  SuccessResponseSchema,
  formatIssues,
  type AipRequest,
  type AipResponse,
} from "../../protocol/contract/schemas.js";
import { AGENT_LIMITS } from "../../protocol/contract/limits.js";
import { isValidTraceId, newTraceId } from "../../protocol/contract/trace.js";
import { spliceJsonObject, type JsonSource } from "../../protocol/transport/json.js";
export type { JsonSource };
import { traceIdOf, validateRequest } from "../../protocol/contract/validate.js";
import type { AgentRecord } from "../core/agent.js";
import { Cancellation, follow, unfollow } from "../../protocol/transport/cancel.js";
import { BrokenAnswer, answerText, neverReachedAgent, noteAnswerText } from "../pool/transport.js";
import { Deadlines, type Expiring } from "../../protocol/util/deadlines.js";

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
  supersede?(request: AipRequest, traceId: string, cancel: Cancellation): () => void;
}

const ms = (since: number): number => Math.round((performance.now() - since) * 1000) / 1000;

/** Failures that are the agent's fault and count towards opening its circuit. */
const AGENT_FAULTS = new Set(["AIP_ERR_AGENT_CRASHED", "AIP_ERR_BAD_AGENT_RESPONSE"]);

const clientGone = (): Error => new AipError("AIP_ERR_CANCELLED", "Client closed the connection");

/** Every forwarded request's deadline, behind one timer (protocol/util/deadlines.ts). */
const deadlines = new Deadlines();

/** A forwarded request's cancellation, aborted with AIP_ERR_TIMEOUT when its deadline passes. */
class Forwarding extends Cancellation implements Expiring {
  readonly expiresAt: number;

  constructor(
    private readonly agent: AgentRecord,
    private readonly timeoutMs: number,
    traceId: string,
  ) {
    super();
    this.traceId = traceId;
    this.expiresAt = performance.now() + timeoutMs;
  }

  expire(): void {
    this.abort(
      new AipError("AIP_ERR_TIMEOUT", `No answer from ${this.agent.name} within ${this.timeoutMs} ms`, {
        extensions: { timeout_ms: this.timeoutMs },
      }),
    );
  }
}

/**
 * Answer one decoded request. `connection` is the client connection it came on: pool slots are shared
 * fairly between connections. `source` is the JSON `value` was decoded from, when `value`'s members are
 * those of the text but for a scoped `constraints.client_id` (orchestrator.ts handle), or a part of them
 * (the skeleton a decode worker made, protocol/transport/decode-worker.ts): the agent is then sent the client's
 * bytes, spliced (encodeForAgent).
 */
export async function forward(
  value: unknown,
  clientSignal: AbortSignal,
  deps: ForwardDeps,
  connection?: number,
  source?: JsonSource,
): Promise<AipResponse> {
  const t0 = performance.now();
  const timings: Record<string, number> = {};
  let traceId = traceIdOf(value) ?? newTraceId();
  let request: AipRequest;
  let agent: AgentRecord;
  try {
    request = validateRequest(value);
    traceId = request.trace_id ?? traceId;
    agent = deps.select(request, traceId);
    // The fast path of validation returns the request itself; zod's copy (a cursor with other keys) is
    // re-encoded as it was checked, unless the text already is that copy (a decode worker's skeleton).
    if (request !== value && !source?.validated) source = undefined;
  } catch (err) {
    timings.route = ms(t0);
    const action = (value as { action?: unknown } | null)?.action;
    return finish(deps, errorResponse(err, traceId), t0, timings, traceId, typeof action === "string" ? action : "");
  }
  timings.route = ms(t0);

  const timeoutMs = request.constraints.timeout_ms ?? agent.manifest.timeouts_ms.default;
  const deadline = Date.now() + timeoutMs;
  const cancel = new Forwarding(agent, timeoutMs, traceId);
  follow(clientSignal, cancel, clientGone);
  deadlines.add(cancel);
  const unclaim = deps.supersede?.(request, traceId, cancel);
  const tQueue = performance.now();
  let release: (() => void) | undefined;
  try {
    release = await agent.pool.acquire(deadline, cancel, connection);
    timings.queue = ms(tQueue);
    agent.beginRequest();
    const tAgent = performance.now();
    try {
      const response = await call(agent, request, traceId, deadline, cancel, source);
      timings.agent = ms(tAgent);
      agent.pool.record(timings.agent);
      if (response.status === "error" && AGENT_FAULTS.has(response.error.type))
        deps.onAgentFailure(agent, response.error.type);
      else deps.onAgentSuccess(agent);
      return finish(deps, response, t0, timings, traceId, request.action, agent);
    } finally {
      agent.endRequest();
    }
  } catch (err) {
    timings.queue ??= ms(tQueue);
    const failure = isAipError(err) ? err : new AipError("AIP_ERR_UNKNOWN", "Forwarding failed");
    if (AGENT_FAULTS.has(failure.code)) deps.onAgentFailure(agent, failure.code);
    const response = errorResponse(failure, traceId, { agent: agent.name, version: agent.version });
    return finish(deps, response, t0, timings, traceId, request.action, agent);
  } finally {
    release?.();
    unclaim?.();
    deadlines.delete(cancel);
    unfollow(clientSignal, cancel);
  }
}

/**
 * The answer completed (the orchestrator's stage timings, then the agent's as "agent.<stage>"; the
 * agent's name and version) and accounted for.
 */
function finish(
  deps: ForwardDeps,
  response: AipResponse,
  t0: number,
  timings: Record<string, number>,
  traceId: string,
  action: string,
  agent?: AgentRecord,
): AipResponse {
  timings.total = ms(t0);
  const merged: Record<string, number> = {};
  for (const k in timings) merged[k] = timings[k]!;
  const own = response.timings_ms;
  if (own) for (const k in own) merged[`agent.${k}`] = own[k]!;
  // The agent's answer as it wrote it, when `response` is that answer decoded (checked, unchanged so far).
  const received = agent ? answerText(response) : undefined;
  const addAgent = agent && response.agent === undefined ? agent.name : undefined;
  const addVersion = agent && response.version === undefined ? agent.version : undefined;
  response.timings_ms = merged;
  if (agent) {
    response.agent ??= agent.name;
    response.version ??= agent.version;
  }
  if (received !== undefined) {
    const text = passThrough(received, own, addAgent, addVersion, merged);
    if (text !== undefined) setResponseText(response, text);
  }
  const outcome: RequestOutcome = {
    trace_id: traceId,
    action,
    agent: agent?.name ?? null,
    version: agent?.version ?? null,
    outcome: response.status === "success" ? "success" : response.error.type,
    server_error: response.status === "error" && response.error.status >= 500,
    timings_ms: timings,
  };
  const model = modelAccounting(response);
  if (model) outcome.model = model;
  deps.onOutcome(outcome);
  return response;
}

const isBlankCode = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/**
 * The answer's JSON for the client made from the agent's `text` instead of encoding the decoded answer
 * again (docs/performance.md, "The orchestrator hop"): the agent's members byte for byte, then what
 * `finish` adds (`agent` and `version` when the agent left them out, `timings_ms` merged). Only when the
 * agent's `timings_ms` (`own`) is absent or is its last member, written as JSON.stringify writes it
 * (`,"timings_ms":{…}}` ends the text, as the agent runtime writes it); undefined otherwise, and the
 * answer is encoded as before. That ending can only be the object's last top-level member: the comma
 * is not inside a string (the quote after it would end the string, and `timings_ms"` cannot follow
 * one), nor in a nested object (the one `}` after it would leave the outer object unclosed).
 */
export function passThrough(
  text: string,
  own: Record<string, number> | undefined,
  addAgent: string | undefined,
  addVersion: string | undefined,
  merged: Record<string, number>,
): string | undefined {
  let end = text.length;
  while (end > 0 && isBlankCode(text.charCodeAt(end - 1))) end--;
  if (text.charCodeAt(end - 1) !== 0x7d) return undefined;
  let cut = end - 1;
  if (own !== undefined) {
    const tail = `,"timings_ms":${JSON.stringify(own)}}`;
    cut = end - tail.length;
    if (cut < 1 || !text.startsWith(tail, cut)) return undefined;
  }
  return (
    text.slice(0, cut) +
    (addAgent === undefined ? "" : `,"agent":${JSON.stringify(addAgent)}`) +
    (addVersion === undefined ? "" : `,"version":${JSON.stringify(addVersion)}`) +
    `,"timings_ms":${JSON.stringify(merged)}}`
  );
}

/**
 * The request as the agent gets it: the decoded request is this request's own, so it is completed in
 * place (its trace id, the budget left as `timeout_ms`). With `source`, the JSON the request was decoded
 * from (unchanged but for these and a scoped `client_id`), the client's bytes are forwarded with these
 * members spliced in (protocol/transport/json.ts spliceJsonObject) instead of re-encoding the whole request: a
 * 1 MiB request is not written out again on the event loop, and numbers are forwarded as they came.
 */
export function encodeForAgent(request: AipRequest, traceId: string, deadline: number, source?: JsonSource): string {
  request.trace_id = traceId;
  const constraints = request.constraints;
  constraints.timeout_ms = Math.max(1, deadline - Date.now());
  const own: Record<string, string> = { timeout_ms: String(constraints.timeout_ms) };
  // Scoped to the connection when it has a document_id (supersede.ts); a string is never longer re-encoded.
  if (typeof constraints.client_id === "string") own.client_id = JSON.stringify(constraints.client_id);
  const text = source?.text;
  const out =
    text === undefined
      ? JSON.stringify(request)
      : spliceJsonObject(
          text,
          {
            trace_id: JSON.stringify(traceId),
            constraints: (at) => (at === undefined ? JSON.stringify(constraints) : spliceJsonObject(text, own, at)),
          },
          undefined,
          source?.members,
        );
  // Re-encoding can lengthen the request (numbers such as 1e20 are written out); agents accept the
  // front door's limit plus FORWARD_HEADROOM_BYTES. Beyond that it is the request's size, not the agent.
  // A UTF-16 unit is at most 3 bytes of UTF-8: a text that short needs no count.
  // And each is at least 1 byte: a text longer than the limit is over it without a count either.
  const limit = AGENT_LIMITS.maxBodyBytes;
  if (out.length * 3 <= limit) return out;
  const bytes = out.length > limit ? out.length : Buffer.byteLength(out);
  if (bytes > limit) {
    throw new AipError(
      "AIP_ERR_PAYLOAD_TOO_LARGE",
      `The request re-encoded for the agent is ${out.length > limit ? "at least " : ""}${bytes} bytes, over the agents' limit of ${AGENT_LIMITS.maxBodyBytes} (numbers are written out in full: 1e20 takes 21 digits)`,
      {
        suggestion: "Send less, or write numbers in their plain form",
        extensions: { limit: AGENT_LIMITS.maxBodyBytes, bytes },
      },
    );
  }
  return out;
}

/** Send to the agent (one retry if the request never reached it) and check its answer. */
async function call(
  agent: AgentRecord,
  request: AipRequest,
  traceId: string,
  deadline: number,
  cancel: Cancellation,
  source: JsonSource | undefined,
): Promise<AipResponse> {
  let reply;
  try {
    try {
      reply = await agent.pool.send(encodeForAgent(request, traceId, deadline, source), cancel);
    } catch (err) {
      if (cancel.aborted || !neverReachedAgent(err)) throw err;
      reply = await agent.pool.send(encodeForAgent(request, traceId, deadline, source), cancel);
    }
  } catch (err) {
    if (cancel.reason) throw cancel.reason;
    if (isAipError(err)) throw err; // the request itself was refused before sending
    if (err instanceof BrokenAnswer) {
      // An NDJSON answer that could not be matched to its request: what is wrong with it, as checked below.
      const wrong = err.answer === undefined ? undefined : checkAnswer(err.answer);
      throw new AipError(
        "AIP_ERR_BAD_AGENT_RESPONSE",
        `Agent ${agent.name} ${typeof wrong === "string" ? `broke the AIP-1 envelope: ${wrong}` : err.message}`,
      );
    }
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
  // Over NDJSON the transport decoded the answer already, to match it by trace id.
  let json: unknown = reply;
  if (typeof reply === "string")
    try {
      json = JSON.parse(reply);
      if (typeof json === "object" && json !== null) noteAnswerText(json, reply);
    } catch {
      throw new AipError(
        "AIP_ERR_BAD_AGENT_RESPONSE",
        `Agent ${agent.name} answered with non-JSON: ${JSON.stringify(reply.slice(0, 120))}`,
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
 * The agent's answer checked against the AIP-1 envelope (protocol/contract/schemas.ts ResponseSchema) field by
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
