import { randomBytes } from "node:crypto";

/** Caller trace ids: 1-128 characters of [A-Za-z0-9._:-], so they are safe in logs and headers. */
export const TRACE_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

export function isValidTraceId(value: unknown): value is string {
  return typeof value === "string" && TRACE_ID_PATTERN.test(value);
}

/** A new trace id: 32 lowercase hex characters (the W3C trace-context trace-id form). */
export function newTraceId(): string {
  return randomBytes(16).toString("hex");
}
