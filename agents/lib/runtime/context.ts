/** A handler's context outside a request: an agent's warm-up, tests, benchmarks and the evaluation harness. */
import type { Logger } from "../../../protocol/util/log.js";
import { StageTimer } from "./timer.js";
import type { HandlerContext } from "./types.js";

/** A context with `budgetMs` until its deadline; nothing aborts it but `signal`, and warnings are dropped. */
export function standaloneContext(options: {
  traceId: string;
  budgetMs: number;
  log: Logger;
  signal?: AbortSignal;
}): HandlerContext {
  const deadline = Date.now() + options.budgetMs;
  return {
    traceId: options.traceId,
    signal: options.signal ?? new AbortController().signal,
    deadline,
    remainingMs: () => Math.max(0, deadline - Date.now()),
    timer: new StageTimer(),
    log: options.log,
    warn: () => undefined,
  };
}
