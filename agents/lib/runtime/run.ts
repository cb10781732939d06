/** Turns an agent definition into an executable: one-shot (stdin → stdout), `--listen PATH`, `--manifest`. */
import { getHeapStatistics } from "node:v8";
import { AipError } from "../../../protocol/contract/errors.js";
import { errorResponse } from "../../../protocol/contract/envelope.js";
import { decodeJson } from "../../../protocol/transport/json.js";
import { AGENT_LIMITS, DEFAULT_LIMITS, resolveLimits, type Limits } from "../../../protocol/contract/limits.js";
import { EnvError, checkEnv, envString } from "../../../protocol/util/env.js";
import { RateLimit, createLogger, type Logger } from "../../../protocol/util/log.js";
import type { AipServer } from "../../../protocol/transport/server.js";
import { newTraceId } from "../../../protocol/contract/trace.js";
import { validateRequest } from "../../../protocol/contract/validate.js";
import { manifestText, wantsManifest } from "./entry.js";
import { AgentInvoker } from "./invoke.js";
import type { AgentDefinition } from "./types.js";

function usage(def: AgentDefinition): string {
  const name = def.manifest.name;
  return `Usage: agent-${name} [--manifest | --listen PATH [--group GROUP] | --help]

${(def.help ?? def.manifest.description).trim()}

  (no flags)      one-shot: read one JSON request from stdin, write one response to stdout
  --manifest      print this agent's AGENT_MANIFEST.json
  --listen PATH   serve AIP-1 (HTTP/1.1 and NDJSON) on the Unix socket PATH
  --group GROUP   with --listen: make the socket 0660 for GROUP (default 0600)

Environment: AIP_LOG_FILE (log file; one-shot mode is silent without it), AIP_LOG_LEVEL (info)
`;
}

/** Entry point of every agent executable. Resolves when the agent should exit. */
export async function runAgent(def: AgentDefinition, argv = process.argv.slice(2)): Promise<void> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(usage(def));
    return;
  }
  if (wantsManifest(argv)) {
    process.stdout.write(manifestText(def.manifest));
    return;
  }
  try {
    checkEnv(process.env, ["agents"]);
  } catch (err) {
    if (err instanceof EnvError) return usageError(def, err.message);
    throw err;
  }
  if (argv[0] === "--listen") {
    const path = argv[1];
    const groupIdx = argv.indexOf("--group");
    const group = groupIdx > 0 ? argv[groupIdx + 1] : undefined;
    if (!path || path.startsWith("--") || (groupIdx > 0 && !group) || argv.length !== (groupIdx > 0 ? 4 : 2)) {
      return usageError(def, "--listen needs a socket path (and --group a group name)");
    }
    await listen(def, path, group);
    return;
  }
  if (argv.length > 0) return usageError(def, `unknown argument ${JSON.stringify(argv[0])}`);
  await oneShot(def);
}

function usageError(def: AgentDefinition, message: string): void {
  process.stderr.write(`agent-${def.manifest.name}: ${message}\n\n${usage(def)}`);
  process.exitCode = 2;
}

/** Read stdin up to the body limit; `undefined` when it is larger. */
async function readStdin(limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

async function oneShot(def: AgentDefinition): Promise<void> {
  // A scheduler treats stderr output as a crash: nothing may reach it in one-shot mode.
  process.emitWarning = () => undefined;
  const log = createLogger({ agentName: def.manifest.name, destination: envString("AIP_LOG_FILE") ?? false });
  const write = (text: string): Promise<void> =>
    new Promise((resolve) => process.stdout.write(text + "\n", () => resolve()));
  const crash = (err: unknown): void => {
    log.error({ event: "crash", err }, "uncaught error in one-shot mode");
    process.stdout.write(JSON.stringify(errorResponse(err, newTraceId())) + "\n", () => process.exit(0));
  };
  process.on("uncaughtException", crash);
  process.on("unhandledRejection", crash);
  const limits = resolveLimits();
  const bytes = await readStdin(limits.maxBodyBytes);
  if (bytes === undefined) {
    const err = new AipError("AIP_ERR_PAYLOAD_TOO_LARGE", `Request exceeds the limit of ${limits.maxBodyBytes} bytes`, {
      extensions: { limit: limits.maxBodyBytes },
    });
    await write(JSON.stringify(errorResponse(err, newTraceId())));
    process.exit(0);
  }
  let value: unknown;
  try {
    value = decodeJson(bytes, limits.maxJsonDepth);
  } catch (err) {
    await write(JSON.stringify(errorResponse(err, newTraceId())));
    process.exit(0);
  }
  // A request refused before any handler would run is answered without the warm-up (a model load, dry
  // keystrokes): it would only delay the refusal.
  if (def.warmup && reachesHandler(def, value)) await def.warmup(log);
  const invoker = new AgentInvoker(def, log);
  const response = await invoker.invoke(value);
  log.info({ event: "request", trace_id: response.trace_id, outcome: response.status }, "one-shot request");
  await write(JSON.stringify(response));
  await def.dispose?.();
  process.exit(0);
}

/** Whether `value` is a request that one of the agent's handlers would be given (else the invoker refuses it). */
function reachesHandler(def: AgentDefinition, value: unknown): boolean {
  try {
    return Object.hasOwn(def.handlers, validateRequest(value).action);
  } catch {
    return false;
  }
}

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
  // The server and its framings load here, not with this module: a one-shot run or `--help` never needs them.
  const [transport, { socketIsLive }] = await Promise.all([
    import("../../../protocol/transport/server.js"),
    import("../../../protocol/transport/socket-file.js"),
  ]);
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
    server = await transport.AipServer.listen({
      socketPath,
      ...(group !== undefined ? { group } : {}),
      // An agent accepts whatever the front door accepted, once re-encoded for forwarding (docs/aip-1.md, Limits).
      limits: { ...AGENT_LIMITS, ...limits },
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
