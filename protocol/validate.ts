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
  const parsed = RequestSchema.safeParse(value);
  if (!parsed.success) {
    const errors = formatIssues(parsed.error);
    throw new AipError("AIP_ERR_INVALID_FIELD", errors.map((e) => `${e.path}: ${e.message}`).join("; "), {
      extensions: { errors },
    });
  }
  return parsed.data;
}

/** The trace id to answer with when a request could not be validated: the caller's if usable. */
export function traceIdOf(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const id = (value as { trace_id?: unknown }).trace_id;
  return isValidTraceId(id) ? id : undefined;
}
