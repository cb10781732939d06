import { randomBytes } from "node:crypto";

/** Caller trace ids: 1-128 characters of [A-Za-z0-9._:-], so they are safe in logs and headers. */
export const TRACE_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

export function isValidTraceId(value: unknown): value is string {
  return typeof value === "string" && TRACE_ID_PATTERN.test(value);
}

/** This process's random half of every trace id it makes (64 bits from the CSPRNG, drawn once). */
const PREFIX = randomBytes(8).toString("hex");
/** The counting half: starts at a random 32-bit value, so ids do not all begin …0000. */
let counter = randomBytes(4).readUInt32BE(0);

/**
 * A new trace id: 32 lowercase hex characters (the W3C trace-context trace-id form), the process's
 * random 64-bit prefix then a 64-bit counter. Unique within the process by the counter and across
 * processes by the prefix, without a random draw per request (docs/performance.md).
 */
export function newTraceId(): string {
  counter++;
  const hi = Math.floor(counter / 0x1_0000_0000);
  return PREFIX + hi.toString(16).padStart(8, "0") + (counter >>> 0).toString(16).padStart(8, "0");
}
