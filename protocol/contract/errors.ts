/**
 * The AIP-1 error registry: every code defined once, with its title, HTTP status
 * and a default suggestion. Problems are RFC 9457 objects whose `type` is the code.
 */

interface ErrorDef {
  readonly title: string;
  readonly status: number;
  readonly suggestion: string;
}

export const ERROR_REGISTRY = {
  AIP_ERR_INVALID_JSON: {
    title: "Invalid JSON input",
    status: 400,
    suggestion: "Send exactly one UTF-8 encoded JSON object",
  },
  AIP_ERR_MISSING_FIELD: {
    title: "Missing required field",
    status: 400,
    suggestion: "Add the missing fields; action, context and constraints are required (objects may be empty)",
  },
  AIP_ERR_INVALID_FIELD: {
    title: "Invalid field",
    status: 400,
    suggestion: "Fix the field named in the detail; see the AIP-1 request schema",
  },
  AIP_ERR_PAYLOAD_TOO_LARGE: {
    title: "Payload too large",
    status: 413,
    suggestion: "Send less source code, or a file_path instead of source_code",
  },
  AIP_ERR_NO_ROUTE: {
    title: "No agent for this request",
    status: 404,
    suggestion: "Check the action and languages against GET /v1/agents",
  },
  AIP_ERR_UNAVAILABLE: {
    title: "No agent available",
    status: 503,
    suggestion: "Retry shortly; GET /healthz shows why the agents are out of rotation",
  },
  AIP_ERR_SOCKET_BUSY: {
    title: "Agent busy",
    status: 503,
    suggestion: "Retry with backoff, or raise max_concurrent in the agent manifest",
  },
  AIP_ERR_TIMEOUT: {
    title: "Request timeout",
    status: 504,
    suggestion: "Raise constraints.timeout_ms or send less context",
  },
  AIP_ERR_MODEL_TIMEOUT: {
    title: "Model inference timeout",
    status: 504,
    suggestion: "Reduce context length or use a smaller model",
  },
  AIP_ERR_CONTEXT_TRUNCATED: {
    title: "Context truncated",
    status: 413,
    suggestion: "Allow truncation (constraints.allow_truncation) or send less context",
  },
  AIP_ERR_PARSE: {
    title: "Source does not parse",
    status: 422,
    suggestion: "Fix the syntax error at the reported position, or set context.language correctly",
  },
  AIP_ERR_SYNTAX: {
    title: "Generated code failed the syntax check",
    status: 422,
    suggestion: "Retry, or set constraints.best_effort to receive the best candidate flagged",
  },
  AIP_ERR_TOO_COMPLEX: {
    title: "Input too deeply nested to process",
    status: 422,
    suggestion: "Reduce the nesting (brackets, functions, chained operators) or send a smaller part of the source",
  },
  AIP_ERR_AGENT_CRASHED: {
    title: "Agent crashed",
    status: 502,
    suggestion: "Retry; the agent is being restarted. GET /healthz shows its last_error",
  },
  AIP_ERR_BAD_AGENT_RESPONSE: {
    title: "Bad agent response",
    status: 502,
    suggestion: "The agent broke AIP-1; run the conformance kit against it",
  },
  AIP_ERR_FORBIDDEN_PATH: {
    title: "Path outside the workspace",
    status: 403,
    suggestion:
      "Use a file_path inside workspace_root, and a workspace_root inside an allowed root (AIP_WORKSPACE_ROOTS / config workspace_roots)",
  },
  AIP_ERR_FORBIDDEN: {
    title: "Not allowed",
    status: 403,
    suggestion:
      "Admin operations are served on the admin socket only, to its owner; a canary must be a version the config declares and must pass vetting",
  },
  AIP_ERR_CANCELLED: {
    title: "Request cancelled",
    status: 499,
    suggestion: "Nothing to do: the request was cancelled by the client or superseded by a newer one",
  },
  AIP_ERR_UNKNOWN: {
    title: "Internal error",
    status: 500,
    suggestion: "Retry; if it persists, report the trace_id with the agent's log",
  },
} as const satisfies Record<string, ErrorDef>;

export type ErrorCode = keyof typeof ERROR_REGISTRY;

export const ERROR_CODES = Object.keys(ERROR_REGISTRY) as ErrorCode[];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && Object.hasOwn(ERROR_REGISTRY, value);
}

/** An RFC 9457 problem as AIP-1 sends it. */
export interface Problem {
  type: ErrorCode;
  title: string;
  status: number;
  detail: string;
  suggestion: string;
  instance?: string;
  [extension: string]: unknown;
}

export interface ProblemOptions {
  detail?: string;
  suggestion?: string;
  instance?: string;
  /** Extension members (RFC 9457 §3.2), e.g. `fields` or `line`. */
  extensions?: Record<string, unknown>;
}

/** The one way to build a problem object from a registry code. */
export function problem(code: ErrorCode, options: ProblemOptions = {}): Problem {
  const def = ERROR_REGISTRY[code];
  const out: Problem = {
    type: code,
    title: def.title,
    status: def.status,
    detail: options.detail ?? def.title,
    suggestion: options.suggestion ?? def.suggestion,
  };
  if (options.instance !== undefined) out.instance = options.instance;
  // Extension members never overwrite the registry's own members.
  for (const [k, v] of Object.entries(options.extensions ?? {}))
    if (!Object.hasOwn(out, k) && k !== "instance") out[k] = v;
  return out;
}

/** An error carrying a registry code; thrown by handlers, turned into a problem at the edge. */
export class AipError extends Error {
  readonly code: ErrorCode;
  readonly suggestion: string | undefined;
  readonly extensions: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, detail?: string, options: Omit<ProblemOptions, "detail" | "instance"> = {}) {
    super(detail ?? ERROR_REGISTRY[code].title);
    this.name = "AipError";
    this.code = code;
    this.suggestion = options.suggestion;
    this.extensions = options.extensions;
  }

  get status(): number {
    return ERROR_REGISTRY[this.code].status;
  }

  toProblem(instance?: string): Problem {
    const opts: ProblemOptions = { detail: this.message };
    if (this.suggestion !== undefined) opts.suggestion = this.suggestion;
    if (this.extensions !== undefined) opts.extensions = this.extensions;
    if (instance !== undefined) opts.instance = instance;
    return problem(this.code, opts);
  }
}

export function isAipError(err: unknown): err is AipError {
  return (
    err instanceof AipError ||
    (typeof err === "object" &&
      err !== null &&
      isErrorCode((err as { code?: unknown }).code) &&
      (err as { name?: unknown }).name === "AipError")
  );
}
