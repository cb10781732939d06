/** An agent's server mode: AIP-1 (HTTP/1.1 and NDJSON) on a Unix socket until SIGTERM/SIGINT. */
import { getHeapStatistics } from "node:v8";
import { AGENT_LIMITS, DEFAULT_LIMITS, type Limits } from "../../../protocol/contract/limits.js";
import { envInt, envString } from "../../../protocol/util/env.js";
import { RateLimit, createLogger, type Logger } from "../../../protocol/util/log.js";
import { AipServer } from "../../../protocol/transport/server.js";
import { socketIsLive } from "../../../protocol/transport/socket-file.js";
import { AgentInvoker } from "./invoke.js";
import type { AgentDefinition } from "./types.js";

/** Serve the agent on a socket until SIGTERM/SIGINT; resolves after a clean shutdown. */
export async function listen(
  def: AgentDefinition,
  socketPath: string,
  group?: string,
  limits: Partial<Limits> = {},
): Promise<void> {
  const log = createLogger({ agentName: def.manifest.name, destination: envString("AIP_LOG_FILE") ?? 1 });
  // Node's warnings go to the log, not to stderr (stderr output reads as a crash to a scheduler).
  process.removeAllListeners("warning");
  process.on("warning", (w) => log.warn({ event: "node_warning", warning: w.name, detail: w.message }, w.message));
  const started = Date.now();
  // Refuse a live socket before warming up: loading a model only to find the socket taken wastes seconds.
  if (await socketIsLive(socketPath)) {
    const message = `Another server is listening on ${socketPath}; refusing to take over its socket (stop it first or choose another path)`;
    log.error({ event: "listen_failed", err: message, socket: socketPath }, message);
    process.exitCode = 1;
    return;
  }
  try {
    if (def.warmup) await def.warmup(log);
    // Before the socket exists: a request that arrives the moment it does must not load the compiler
    // inside its deadline.
    if (def.preload) {
      const started = performance.now();
      def.preload(log);
      log.info({ event: "preloaded", ms: Math.round(performance.now() - started) }, "preloaded before listening");
    }
  } catch (err) {
    log.error({ event: "warmup_failed", err }, "warm-up failed");
    process.exitCode = 1;
    return;
  }
  const invoker = new AgentInvoker(def, log);
  // After warm-up and preload, so that what they loaded counts as live (heap.ts).
  invoker.tuneHeapGrowth();
  const warmSoon = later(def, log);
  // The socket accepts before AipServer.listen resolves (permissions are applied after bind): a SIGTERM
  // in that window must shut down cleanly, not kill the process, so the handlers go in first.
  let pendingSignal: string | undefined;
  let onSignal: ((signal: string) => void) | undefined;
  const handle = (signal: string): void => {
    if (onSignal) onSignal(signal);
    else pendingSignal ??= signal;
  };
  process.on("SIGTERM", () => handle("SIGTERM"));
  process.on("SIGINT", () => handle("SIGINT"));
  let server: AipServer;
  try {
    server = await AipServer.listen({
      socketPath,
      ...(group !== undefined ? { group } : {}),
      // An agent accepts whatever the front door accepted, once re-encoded for forwarding (docs/aip-1.md, Limits).
      limits: {
        ...AGENT_LIMITS,
        requestReceiveTimeoutMs: envInt("AIP_REQUEST_RECEIVE_TIMEOUT_MS") ?? AGENT_LIMITS.requestReceiveTimeoutMs,
        ...limits,
      },
      // The orchestrator's NDJSON connections carry its clients' requests, already shared fairly (docs/aip-1.md).
      trustUnordered: true,
      invoke: async (value, ctx) => {
        warmSoon();
        return logged(log, await invoker.invoke(value, ctx.signal), ctx.framing);
      },
      routes: {
        "GET /healthz": async () => {
          warmSoon();
          return {
            status: 200,
            body: JSON.stringify({
              status: "ok",
              agent: def.manifest.name,
              version: def.manifest.version,
              pid: process.pid,
              uptime_s: Math.round((Date.now() - started) / 1000),
              concurrent_requests: invoker.inflight,
              max_concurrent: def.manifest.max_concurrent,
              memory: memoryReport(),
              ...def.health?.(),
            }),
          };
        },
      },
      onEvent: (e) => log.warn({ ...e, event: e.event }, e.event),
    });
  } catch (err) {
    log.error({ event: "listen_failed", err: (err as Error).message, socket: socketPath }, (err as Error).message);
    process.exitCode = 1;
    return;
  }
  log.info({ event: "ready", socket: socketPath, pid: process.pid, version: def.manifest.version }, "agent ready");
  await new Promise<void>((resolve) => {
    let stopping = false;
    onSignal = (signal: string): void => {
      if (stopping) return;
      stopping = true;
      log.info({ event: "shutdown", signal, inflight: invoker.inflight }, "shutting down");
      void server.close(DEFAULT_LIMITS.shutdownGraceMs).then(resolve);
    };
    if (pendingSignal !== undefined) onSignal(pendingSignal);
  });
  await def.dispose?.();
  log.info({ event: "stopped" }, "agent stopped");
}

/**
 * The agent's `warmLater`, run once, on the turn after the first readiness probe or request that calls
 * the returned function: that answer goes out first.
 */
function later(def: AgentDefinition, log: Logger): () => void {
  let scheduled = def.warmLater === undefined;
  return () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      const started = performance.now();
      try {
        def.warmLater!(log);
        log.info({ event: "warmed_later", ms: Math.round(performance.now() - started) }, "warmed after ready");
      } catch (err) {
        log.warn({ event: "warm_later_failed", err: (err as Error).message }, "warming after ready failed");
      }
    });
  };
}

/** Failed requests logged per second at most when the failure is the client's (4xx); the others are counted in `suppressed`. */
const CLIENT_ERROR_LOG_PER_S = 50;
const clientErrorLog = new RateLimit(CLIENT_ERROR_LOG_PER_S);

/** Heap in use and its limit (from --max-old-space-size: the manifest's memory in embedded mode), and RSS, in MiB. */
function memoryReport(): Record<string, number> {
  const h = getHeapStatistics();
  const mib = (b: number): number => Math.round((b / 1024 / 1024) * 10) / 10;
  return {
    heap_used_mib: mib(h.used_heap_size),
    heap_limit_mib: mib(h.heap_size_limit),
    rss_mib: mib(process.memoryUsage.rss()),
  };
}

function logged(
  log: Logger,
  response: import("../../../protocol/contract/schemas.js").AipResponse,
  framing: string,
): import("../../../protocol/contract/schemas.js").AipResponse {
  // A success is logged at debug, off by default: its fields are not even gathered then.
  if (response.status === "success" && !log.isLevelEnabled("debug")) return response;
  const fields = {
    event: "request",
    trace_id: response.trace_id,
    framing,
    outcome: response.status,
    timings_ms: response.timings_ms,
  };
  if (response.status === "error") {
    const suppressed = response.error.status < 500 ? clientErrorLog.take() : 0;
    if (suppressed !== undefined)
      log.info({ ...fields, error: response.error.type, ...(suppressed > 0 ? { suppressed } : {}) }, "request failed");
  } else log.debug(fields, "request");
  return response;
}
