/** Request validation shared by agents and the orchestrator: the exact AIP-1 error for each fault. */
import { AipError } from "./errors.js";
import { RequestSchema, formatIssues, type AipRequest } from "./schemas.js";
import { isValidTraceId } from "./trace.js";

const REQUIRED = ["action", "context", "constraints"] as const;

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `${typeof value} ${JSON.stringify(value)}`.slice(0, 60);
}

/** Parse a decoded JSON value into a request, or throw the AIP error that says what is wrong. */
export function validateRequest(value: unknown): AipRequest {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new AipError("AIP_ERR_INVALID_JSON", `Expected one JSON object, got ${describe(value)}`);
  }
  const missing = REQUIRED.filter((field) => !Object.hasOwn(value, field));
  if (missing.length > 0) {
    throw new AipError(
      "AIP_ERR_MISSING_FIELD",
      `Missing required field${missing.length > 1 ? "s" : ""}: ${missing.join(", ")}`,
      {
        extensions: { fields: missing },
      },
    );
  }
  if (isPlainRequest(value as Record<string, unknown>)) return value as AipRequest;
  const parsed = RequestSchema.safeParse(value);
  if (!parsed.success) {
    const errors = formatIssues(parsed.error);
    throw new AipError("AIP_ERR_INVALID_FIELD", errors.map((e) => `${e.path}: ${e.message}`).join("; "), {
      extensions: { errors },
    });
  }
  return parsed.data;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const optString = (v: unknown): boolean => v === undefined || (typeof v === "string" && v !== "");
const optPositiveInt = (v: unknown, max = Number.MAX_SAFE_INTEGER): boolean =>
  v === undefined || (Number.isInteger(v) && (v as number) > 0 && (v as number) <= max);

/**
 * A cursor zod's CursorSchema accepts unchanged: `line` and `column` and nothing else (zod drops other
 * keys, so such a cursor goes through zod), or none.
 */
function plainCursor(c: unknown): boolean {
  if (c === undefined) return true;
  if (!isObject(c)) return false;
  let keys = 0;
  for (const k in c) {
    if (k !== "line" && k !== "column") return false;
    keys++;
  }
  const { line, column } = c;
  return (
    keys === 2 &&
    Number.isSafeInteger(line) &&
    (line as number) >= 1 &&
    Number.isSafeInteger(column) &&
    (column as number) >= 0
  );
}

/**
 * The common request checked field by field against RequestSchema (protocol/contract/schemas.ts), without zod:
 * true when zod would accept it unchanged. Anything else (a cursor with other keys, which zod drops;
 * any fault) goes through zod, which says exactly what is wrong (docs/performance.md). The request
 * returned as it is can be forwarded as its client sent it (orchestrator/request/forward.ts encodeForAgent).
 */
function isPlainRequest(v: Record<string, unknown>): boolean {
  const { action, context: cx, constraints: cs } = v;
  if (typeof action !== "string" || action === "" || !isObject(cx) || !isObject(cs)) return false;
  if (v.trace_id !== undefined && !isValidTraceId(v.trace_id)) return false;
  if (!plainCursor(cx.cursor) || !optString(cx.language) || !optString(cx.file_path)) return false;
  if (!optString(cx.workspace_root) || (cx.source_code !== undefined && typeof cx.source_code !== "string"))
    return false;
  if (!optPositiveInt(cs.timeout_ms, 3_600_000) || !optPositiveInt(cs.max_tokens)) return false;
  if (!optString(cs.agent) || !optString(cs.version)) return false;
  if (cs.allow_truncation !== undefined && typeof cs.allow_truncation !== "boolean") return false;
  const langs = cs.languages;
  if (langs !== undefined && !(Array.isArray(langs) && langs.every((l) => typeof l === "string" && l !== "")))
    return false;
  return true;
}

/** The trace id to answer with when a request could not be validated: the caller's if usable. */
export function traceIdOf(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const id = (value as { trace_id?: unknown }).trace_id;
  return isValidTraceId(id) ? id : undefined;
}
