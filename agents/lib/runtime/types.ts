/** What an agent author writes: a manifest and a handler per action. */
import type { AgentManifest, AipRequest } from "../../../protocol/contract/schemas.js";
import type { ErrorCode, Problem } from "../../../protocol/contract/errors.js";
import type { Logger } from "../../../protocol/util/log.js";
import type { StageTimer } from "./timer.js";

export interface HandlerContext {
  traceId: string;
  /** Fires at the deadline (reason: AIP_ERR_TIMEOUT) or when the client goes away (AIP_ERR_CANCELLED). */
  signal: AbortSignal;
  /** Epoch milliseconds by which the answer is due. */
  deadline: number;
  remainingMs(): number;
  timer: StageTimer;
  log: Logger;
  /** Add a non-fatal problem to the response's `warnings`. */
  warn(code: ErrorCode, detail: string, extensions?: Record<string, unknown>): void;
}

export type Handler = (request: AipRequest, ctx: HandlerContext) => Promise<unknown> | unknown;

export interface AgentDefinition {
  manifest: AgentManifest;
  /** What `--help` says about this agent: its action, the request fields it reads, its environment (default: the manifest's description). */
  help?: string;
  /** One handler per action; every action must be one of the manifest's capabilities. */
  handlers: Record<string, Handler>;
  /** Run before the agent reports ready (load models, warm parsers). */
  warmup?: (log: Logger) => Promise<void>;
  /**
   * What a request would otherwise load on first use and must not pay for inside its deadline (the
   * compiler and its tree converter): in socket mode loaded after `warmup` and before the agent listens, so that the first
   * request finds it loaded; `--manifest` and one-shot mode leave it to the request that needs it, so
   * that a refusal or a manifest is answered without it.
   */
  preload?: (log: Logger) => void;
  /**
   * Warming that answering does not wait for (prettier's parsers, which a handler loads on first use
   * anyway): run once the agent has answered its first readiness probe or request, so that a start
   * is not held up by it and the first request usually finds it done.
   */
  warmLater?: (log: Logger) => void;
  /** Extra fields for GET /healthz; `status: "degraded"` with a `reason` is allowed. */
  health?: () => Record<string, unknown>;
  /** Release resources on shutdown. */
  dispose?: () => Promise<void>;
}

/**
 * A bundled agent before its definition is loaded: its name and how to load the rest (handlers, parsers,
 * the model engine). Its entry answers `--manifest` from the checked-in file without it; every other mode
 * loads it (a one-shot run while it reads stdin, so that vetting traces the agent's own code).
 */
export interface DeferredAgent {
  name: string;
  load: (context: LoadContext) => Promise<AgentDefinition>;
}

/** What runAgent tells a deferred agent's loader about the run it loads for. */
export interface LoadContext {
  /** The run answers one request from stdin and exits: work that pays off only over later requests is waste. */
  oneShot: boolean;
}

export type Warnings = Problem[];
