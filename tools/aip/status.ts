/** `aip health`, `aip agents`, `aip check`: the orchestrator's view of its agents. */
import { statusWord } from "../../orchestrator/request/status.js";
import { httpRequest } from "../../protocol/transport/client.js";
import { EXIT, UsageError, parseArgs, type Command } from "./command.js";
import { adminSocketPath, socketPath } from "./socket.js";

async function get(
  argv: string[],
  method: string,
  path: string,
  booleans: string[] = [],
  admin = false,
): Promise<
  { json: Record<string, unknown>; asJson: boolean; status: number; flags: Record<string, string | true> } | number
> {
  const { flags, positionals } = parseArgs(argv, admin ? ["socket", "admin-socket"] : ["socket"], [
    "json",
    ...booleans,
  ]);
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const sock = admin ? adminSocketPath(flags["admin-socket"], flags.socket) : socketPath(flags.socket);
  try {
    const res = await httpRequest(sock, { method, path, ...(method === "POST" ? { body: "" } : {}) });
    return {
      json: JSON.parse(res.body) as Record<string, unknown>,
      asJson: flags.json === true,
      status: res.status,
      flags,
    };
  } catch (err) {
    console.error(`aip: cannot reach the orchestrator on ${sock}: ${(err as Error).message} (is \`aip up\` running?)`);
    return EXIT.aipError;
  }
}

/** A fixed-width text table. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

type Snapshot = Record<string, unknown> & { pool?: Record<string, unknown> };

/**
 * What the STATUS column says: the supervisor state, `degraded` for a healthy agent that reports
 * itself degraded (e.g. complete without a model), and why an agent is out of rotation.
 */
export function statusCell(a: Snapshot): string {
  const admission = a.admission as { admitted?: boolean } | undefined;
  const circuit = a.circuit as { open?: boolean } | undefined;
  const state = statusWord(a);
  const why = [...(circuit?.open ? ["circuit open"] : []), ...(admission?.admitted === false ? ["out: host cpu"] : [])];
  if (why.length === 0 && a.available === false && a.status === "healthy") why.push("out");
  return why.length > 0 ? `${state} (${why.join(", ")})` : state;
}

/**
 * `aip health`'s verdict on one agent. Healthy is fine; degraded and out of rotation for host CPU
 * are fine too (a peer serves) unless `strict`; any other state fails.
 */
export function agentPasses(a: Snapshot, strict: boolean): boolean {
  if (a.role === "retained") return true;
  const circuit = a.circuit as { open?: boolean } | undefined;
  const admission = a.admission as { admitted?: boolean } | undefined;
  if (a.status !== "healthy" || circuit?.open) return false;
  if (strict && (a.degraded === true || admission?.admitted === false)) return false;
  return true;
}

/** The model engine block of an agent's own /healthz (agents/lib/llm: local or remote). */
type EngineBlock = Record<string, unknown> & {
  circuit?: { state?: string };
  errors?: Record<string, number>;
  fallbacks?: Record<string, number>;
  latency_ms?: { p95?: number };
  last_error?: { message?: string } | null;
};

/** `aip health`'s second table: each model-backed agent's engine, reachability, traffic and fallbacks. */
export function modelRows(agents: Snapshot[]): string[][] {
  return agents.flatMap((a) => {
    const report = (a.health as { report?: Record<string, unknown> } | undefined)?.report;
    const e = report?.["model_engine"] as EngineBlock | undefined;
    if (!e) return [];
    const sum = (o: Record<string, number> | undefined): number => Object.values(o ?? {}).reduce((n, v) => n + v, 0);
    const fallbacks = Object.entries(e.fallbacks ?? {})
      .filter(([, v]) => v > 0)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ");
    return [
      [
        String(a.name),
        e.kind === "remote" ? `remote ${String(e.url)}` : "local",
        String(e.model ?? "none"),
        e.reachable === true ? "yes" : "no",
        e.circuit?.state ?? "-",
        `${Number(e.prompt_tokens ?? 0)}/${Number(e.completion_tokens ?? 0)}`,
        String(sum(e.errors)),
        e.latency_ms?.p95 !== undefined ? String(e.latency_ms.p95) : "-",
        fallbacks || "0",
        String(e.last_error?.message ?? "").slice(0, 60),
      ],
    ];
  });
}

export const health: Command = {
  usage: `Usage: aip health [--json] [--strict] [--socket PATH]

Exit status 0 when every agent is healthy, 1 otherwise. A degraded agent (it serves, but
a peer is preferred: complete without a model) and one out of rotation because host CPU
is high count as healthy, unless --strict is given.`,
  async run(argv) {
    const r = await get(argv, "GET", "/healthz", ["strict"]);
    if (typeof r === "number") return r;
    const strict = r.flags.strict === true;
    const agents = Object.values((r.json.agents ?? {}) as Record<string, Snapshot>);
    const all = agents.flatMap((a) => [
      a,
      ...(["canary", "retained"] as const).flatMap((role) => (a[role] ? [a[role] as Snapshot] : [])),
    ]);
    if (r.asJson) console.log(JSON.stringify(r.json, null, 2));
    else {
      console.log(
        `agency ${String(r.json.status)} (${String(r.json.mode)}; cpu ${Math.round(Number(r.json.cpu_load) * 100)}%)\n`,
      );
      console.log(
        table(
          ["AGENT", "VERSION", "STATUS", "P95 MS", "IN FLIGHT", "POOL", "QUEUE", "RESTARTS", "LAST ERROR"],
          all.map((a) => [
            String(a.name),
            String(a.version),
            statusCell(a),
            String(a.p95_latency_ms),
            String(a.concurrent_requests),
            String(a.pool_size),
            String(a.queue_depth),
            String(a.restarts),
            String((a.degraded === true ? a.degraded_reason : a.last_error) ?? "").slice(0, 60),
          ]),
        ),
      );
      const models = modelRows(all);
      if (models.length > 0)
        console.log(
          `\n${table(
            [
              "AGENT",
              "ENGINE",
              "MODEL",
              "REACHABLE",
              "CIRCUIT",
              "TOKENS IN/OUT",
              "ERRORS",
              "P95 MS",
              "FALLBACKS",
              "LAST ERROR",
            ],
            models,
          )}`,
        );
    }
    return all.length > 0 && all.every((a) => agentPasses(a, strict)) ? EXIT.ok : EXIT.aipError;
  },
};

export const agents: Command = {
  usage: "Usage: aip agents [--json] [--socket PATH]",
  async run(argv) {
    const r = await get(argv, "GET", "/v1/agents");
    if (typeof r === "number") return r;
    if (r.asJson) console.log(JSON.stringify(r.json, null, 2));
    else {
      const list = (r.json.agents ?? []) as (Snapshot & {
        manifest: { capabilities: string[]; languages: string[]; max_concurrent: number };
      })[];
      console.log(
        table(
          ["AGENT", "VERSION", "STATUS", "CAPABILITIES", "LANGUAGES", "MAX CONCURRENT", "SOCKET"],
          list.map((a) => [
            String(a.name),
            String(a.version),
            statusCell(a),
            a.manifest.capabilities.join(","),
            a.manifest.languages.join(","),
            String(a.manifest.max_concurrent),
            String(a.socket),
          ]),
        ),
      );
    }
    return EXIT.ok;
  },
};

export const check: Command = {
  usage:
    "Usage: aip check [--json] [--admin-socket PATH] [--socket PATH]\n\nSame as sending SIGUSR1 to the orchestrator (over the owner-only admin socket). An agent left failed by a crash loop is started again (action revived). Exit 1 if any agent failed the check.",
  async run(argv) {
    const r = await get(argv, "POST", "/v1/admin/health-check", [], true);
    if (typeof r === "number") return r;
    const checked = (r.json.checked ?? []) as Record<string, unknown>[];
    if (r.asJson) console.log(JSON.stringify(r.json, null, 2));
    else
      console.log(
        table(
          ["AGENT", "VERSION", "OK", "ACTION", "ERROR"],
          checked.map((c) => [
            String(c.agent),
            String(c.version),
            String(c.ok),
            String(c.action),
            String(c.error ?? ""),
          ]),
        ),
      );
    return checked.every((c) => c.ok) ? EXIT.ok : EXIT.aipError;
  },
};
