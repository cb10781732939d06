/**
 * The orchestrator's front door: AIP-1 on its Unix socket (owner, or the socket group), the admin API on
 * a separate owner-only socket (docs/security.md), and an optional 127.0.0.1 port for probes.
 */
import type { Limits } from "../protocol/contract/limits.js";
import { createServer, type Server } from "node:http";
import { z } from "zod";
import { AipError } from "../protocol/contract/errors.js";
import { openApiDocument, schemaDocument } from "../protocol/contract/published.js";
import { formatIssues } from "../protocol/contract/schemas.js";
import { AipServer, type RouteHandler } from "../protocol/transport/server.js";
import { TURN_BIG_BYTES } from "../protocol/transport/turns.js";
import type { Orchestrator } from "./orchestrator.js";
import { agentList } from "./request/status.js";

const json = (status: number, body: unknown): { status: number; body: string } => ({
  status,
  body: JSON.stringify(body),
});

/** A canary names a version the agency config declares; a command or an environment is never accepted. */
const CanaryStartSchema = z.strictObject({
  agent: z.string().min(1),
  version: z.string().min(1),
  percent: z.number().min(0).max(100).optional(),
});
const CanaryAgentSchema = z.strictObject({ agent: z.string().min(1) });

/** Validate an admin request body; failures are AIP_ERR_INVALID_FIELD naming each path. */
function body<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value ?? {});
  if (!parsed.success) {
    throw new AipError(
      "AIP_ERR_INVALID_FIELD",
      formatIssues(parsed.error)
        .map((e) => `${e.path}: ${e.message}`)
        .join("; "),
    );
  }
  return parsed.data;
}

/** The published contract (protocol/contract/published.ts), serialised once. */
let published: { schema: string; openapi: string } | undefined;
const publishedDocs = (): { schema: string; openapi: string } =>
  (published ??= { schema: JSON.stringify(schemaDocument()), openapi: JSON.stringify(openApiDocument()) });

/** At shutdown, how long an idle client keep-alive connection is kept for a request already on its way. */
export const KEEPALIVE_LINGER_MS = 1000;

/** The routes of the public socket: health, metrics, the agent list, the published contract. */
export function routes(o: Orchestrator): Record<string, RouteHandler> {
  const refused = (): never => {
    throw new AipError(
      "AIP_ERR_FORBIDDEN",
      o.config.adminSocket
        ? `Admin operations are served only on the admin socket ${o.config.adminSocket} (owner only)`
        : "The admin API is switched off (config admin_api: false)",
    );
  };
  const admin = Object.fromEntries(Object.keys(adminRoutes(o)).map((k) => [k, refused]));
  return {
    ...admin,
    "GET /v1/schema": async () => ({
      status: 200,
      body: publishedDocs().schema,
      contentType: "application/schema+json",
    }),
    "GET /openapi.json": async () => ({ status: 200, body: publishedDocs().openapi }),
    "GET /livez": async () => {
      const h = o.livez();
      return json(h.httpStatus, h.body);
    },
    "GET /readyz": async () => {
      const h = o.readyz();
      return json(h.httpStatus, h.body);
    },
    "GET /healthz": async () => {
      const h = o.healthz();
      return json(h.httpStatus, h.body);
    },
    "GET /metrics": async () => ({ status: 200, body: await o.metrics.text(), contentType: o.metrics.contentType }),
    "GET /v1/agents": async () => json(200, { agents: agentList(o.agents) }),
  };
}

/** The routes of the admin socket: forced health checks and canary control. */
export function adminRoutes(o: Orchestrator): Record<string, RouteHandler> {
  return {
    "GET /healthz": async () => {
      const h = o.healthz();
      return json(h.httpStatus, h.body);
    },
    "POST /v1/admin/health-check": async () => json(200, { checked: await o.checkNow() }),
    "GET /v1/admin/canary": async () => json(200, { canary: o.canary.status() }),
    "POST /v1/admin/canary/start": async ({ body: b }) => {
      const raw = (b ?? {}) as Record<string, unknown>;
      const carried = ["command", "env", "args"].filter((k) => typeof raw === "object" && raw !== null && k in raw);
      if (carried.length > 0) {
        throw new AipError(
          "AIP_ERR_FORBIDDEN",
          `A canary names a version declared in the agency config (agents[].versions); ${carried.join(" and ")} ${carried.length > 1 ? "are" : "is"} never accepted`,
        );
      }
      const { agent, ...opts } = body(CanaryStartSchema, b);
      return json(
        200,
        await o.canary.start(
          agent,
          opts.percent !== undefined ? { version: opts.version, percent: opts.percent } : { version: opts.version },
        ),
      );
    },
    "POST /v1/admin/canary/promote": async ({ body: b }) =>
      json(200, await o.canary.promote(body(CanaryAgentSchema, b).agent)),
    "POST /v1/admin/canary/rollback": async ({ body: b }) =>
      json(200, await o.canary.rollback(body(CanaryAgentSchema, b).agent)),
  };
}

function serverLimits(o: Orchestrator): Partial<Limits> {
  const l = o.config.limits;
  return {
    maxBodyBytes: l.max_body_bytes,
    maxLineBytes: l.max_line_bytes,
    maxJsonDepth: l.max_json_depth,
    maxConnections: l.max_connections,
    idleTimeoutMs: l.idle_timeout_ms,
    headersTimeoutMs: l.headers_timeout_ms,
    requestReceiveTimeoutMs: l.request_receive_timeout_ms,
    // An NDJSON line has the deadline an HTTP head has (docs/aip-1.md, Limits: lineReceiveTimeoutMs).
    lineReceiveTimeoutMs: l.headers_timeout_ms,
    shutdownGraceMs: l.shutdown_grace_ms,
  };
}

/** Listen on the admin socket (0600, never the socket group); undefined when the admin API is off. */
export async function listenAdmin(o: Orchestrator): Promise<AipServer | undefined> {
  if (!o.config.adminSocket) return undefined;
  return AipServer.listen({
    socketPath: o.config.adminSocket,
    limits: serverLimits(o),
    invoke: () =>
      Promise.reject(
        new AipError(
          "AIP_ERR_NO_ROUTE",
          `The admin socket serves admin routes only; send requests to ${o.config.socket}`,
        ),
      ),
    routes: adminRoutes(o),
    onEvent: (e) => o.log.warn({ ...e, socket: "admin" }, e.event),
  });
}

/**
 * Listen on the orchestrator socket (same framing and limits as every agent); on `fd` when the socket
 * was handed over (systemd socket activation, a reload).
 */
export function listenFrontDoor(
  o: Orchestrator,
  inherited?: { fd: number; from: "systemd" | "reload" },
): Promise<AipServer> {
  return AipServer.listen({
    socketPath: o.config.socket,
    // systemd's socket file is systemd's; one a reload handed over is still this agency's own.
    ...(inherited ? { fd: inherited.fd, ownsFile: inherited.from === "reload" } : {}),
    ...(o.config.socketGroup !== undefined ? { group: o.config.socketGroup } : {}),
    limits: serverLimits(o),
    // A restart or reload leaves no client's request unread (docs/reliability.md: restarts and reloads).
    keepAliveLingerMs: KEEPALIVE_LINGER_MS,
    invoke: (value, ctx) => o.handle(value, ctx.signal, ctx.connection, ctx.source),
    // A large request is decoded in a worker thread; the event loop routes its skeleton and forwards its
    // bytes (protocol/transport/decode-worker.ts): the same size from which it waits for its own fair turn.
    decodeWorkerBytes: TURN_BIG_BYTES,
    routes: routes(o),
    // A drain's count of the connections it closed is news, not trouble: info.
    onEvent: (e) => (e.event === "drain_closed" ? o.log.info({ ...e }, e.event) : o.log.warn({ ...e }, e.event)),
  });
}

/** The probe routes the 127.0.0.1 port serves; nothing else (no invoke, no admin) is reachable there. */
export const PROBE_ROUTES = ["/livez", "/readyz", "/healthz", "/metrics"] as const;

/** GET /livez, /readyz, /healthz and /metrics only, on 127.0.0.1:port, for probes that cannot reach a Unix socket. */
export function listenHealthPort(o: Orchestrator, port: number, host = o.config.healthHost): Promise<Server> {
  const r = routes(o);
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    const handler =
      req.method === "GET" && (PROBE_ROUTES as readonly string[]).includes(path) ? r[`GET ${path}`] : undefined;
    if (!handler) {
      res.writeHead(404, { "Content-Type": "text/plain" }).end(`only GET ${PROBE_ROUTES.join(", ")} are served here\n`);
      return;
    }
    void handler({
      signal: new AbortController().signal,
      url: new URL(req.url ?? "/", "http://127.0.0.1"),
      body: undefined,
    }).then((out) => {
      res.writeHead(out.status, { "Content-Type": out.contentType ?? "application/json" }).end(out.body);
    });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve(server));
  });
}
