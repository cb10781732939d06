/** Building AIP-1 response envelopes: the trace id is always set, problems carry it as `instance`. */
import { AipError, isAipError, problem, type ErrorCode, type Problem } from "./errors.js";
import type { ErrorResponse, SuccessResponse } from "./schemas.js";

export interface EnvelopeExtras {
  agent?: string;
  version?: string;
  timings_ms?: Record<string, number>;
}

export function successResponse(
  payload: unknown,
  traceId: string,
  extras: EnvelopeExtras & { warnings?: Problem[] } = {},
): SuccessResponse {
  const { warnings, ...rest } = extras;
  // Built without `warnings` rather than deleted after: a deleted key leaves a slower object behind.
  return warnings && warnings.length > 0
    ? { status: "success", payload, trace_id: traceId, ...rest, warnings }
    : { status: "success", payload, trace_id: traceId, ...rest };
}

/** An error envelope from an AipError, a code, or any thrown value (which becomes AIP_ERR_UNKNOWN). */
export function errorResponse(err: unknown, traceId: string, extras: EnvelopeExtras = {}): ErrorResponse {
  return { status: "error", trace_id: traceId, error: toProblem(err, traceId), ...extras };
}

export function toProblem(err: unknown, instance: string): Problem {
  if (isAipError(err)) return err.toProblem(instance);
  return problem("AIP_ERR_UNKNOWN", { detail: "The request failed with an unexpected internal error", instance });
}

export function errorOf(code: ErrorCode, detail: string, traceId: string, extras: EnvelopeExtras = {}): ErrorResponse {
  return errorResponse(new AipError(code, detail), traceId, extras);
}

/**
 * Responses whose JSON text was made with them: an agent's answer passed through by the orchestrator
 * (orchestrator/request/forward.ts, `finish`) is written as the agent's bytes with its own members added, not
 * decoded and encoded again (docs/performance.md, "The orchestrator hop"). The response must not change
 * after its text is set.
 */
const responseTexts = new WeakMap<object, string>();

/**
 * `response`'s JSON is `text`: its members and values, in another member order than JSON.stringify's
 * and with the agent's own spelling of numbers and escapes.
 */
export function setResponseText(response: SuccessResponse | ErrorResponse, text: string): void {
  responseTexts.set(response, text);
}

/** The response as JSON: the text made with it, or JSON.stringify's. What every framing writes. */
export function responseJson(response: SuccessResponse | ErrorResponse): string {
  return responseTexts.get(response) ?? JSON.stringify(response);
}

/** HTTP status for an envelope: 200 on success, the problem's status on error. */
export function httpStatusOf(response: SuccessResponse | ErrorResponse): number {
  if (response.status === "success") return 200;
  const status = (response as Partial<ErrorResponse>).error?.status;
  return typeof status === "number" && status >= 400 && status <= 599 ? status : 500;
}
