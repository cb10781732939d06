/** Reading agent-specific request fields with the AIP-1 error for each fault. */
import { AipError } from "../../protocol/errors.js";

/** A required non-empty string at `where` ("context.query"); MISSING_FIELD or INVALID_FIELD otherwise. */
export function requiredString(obj: Record<string, unknown>, key: string, where: string): string {
  if (!Object.hasOwn(obj, key) || obj[key] === undefined) {
    throw new AipError("AIP_ERR_MISSING_FIELD", `Missing required field: ${where}`, { extensions: { fields: [where] } });
  }
  return expectString(obj[key], where);
}

/** An optional string; INVALID_FIELD when present with another type. */
export function optionalString(obj: Record<string, unknown>, key: string, where: string): string | undefined {
  const v = obj[key];
  return v === undefined ? undefined : expectString(v, where);
}

function expectString(v: unknown, where: string): string {
  if (typeof v !== "string" || v.trim() === "") throw invalid(where, "a non-empty string", v);
  return v;
}

/** An optional integer within [min, max]. */
export function optionalInt(obj: Record<string, unknown>, key: string, where: string, min: number, max: number): number | undefined {
  const v = obj[key];
  if (v === undefined) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) throw invalid(where, `an integer from ${min} to ${max}`, v);
  return v;
}

/** An optional array of non-empty strings. */
export function optionalStrings(obj: Record<string, unknown>, key: string, where: string): string[] | undefined {
  const v = obj[key];
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || !v.every((x) => typeof x === "string" && x.length > 0)) throw invalid(where, "an array of non-empty strings", v);
  return v as string[];
}

/** An optional value from a fixed set. */
export function optionalEnum<T extends string>(obj: Record<string, unknown>, key: string, where: string, allowed: readonly T[]): T | undefined {
  const v = obj[key];
  if (v === undefined) return undefined;
  if (typeof v !== "string" || !(allowed as readonly string[]).includes(v)) throw invalid(where, `one of ${allowed.join(", ")}`, v);
  return v as T;
}

/** "Expected X, got Y" with the field path, as AIP_ERR_INVALID_FIELD. */
export function invalid(where: string, expected: string, got: unknown): AipError {
  const shown = JSON.stringify(got) ?? String(got);
  return new AipError("AIP_ERR_INVALID_FIELD", `${where}: expected ${expected}, got ${shown.length > 60 ? `${shown.slice(0, 57)}...` : shown}`, {
    extensions: { errors: [{ path: where, message: `expected ${expected}` }] },
  });
}
