/**
 * Scenario: a hostile neighbour. One client abuses the front door and the agents (bad chunk sizes and
 * unfinished bodies, a 10,000-line NDJSON flood, clients that never read, lines at the limit and
 * numbers that grow on re-encoding, ReDoS-shaped search input, deeply nested source, files deleted
 * under a search) while 4 well-behaved clients call echo. Reports their p99 and failures alone and
 * with the neighbour (interleaved rounds), and the peak RSS of the orchestrator and of each agent
 * against its manifest. Targets: no failures, p99 <= 3x, orchestrator <= 256 MiB, agents within their
 * manifests.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { httpRequest, ndjsonExchange } from "../../protocol/client.js";
import { memoryBytes } from "../../protocol/schemas.js";
import { httpKeepAlive } from "../lib/clients.js";
import { closedLoop } from "../lib/loadgen.js";
import { AIP, DIST, ROOT, benchDir, rssMiB, startProc, waitHealthy } from "../lib/procs.js";
import { echoBody, interleave, ratio, table, type Scenario } from "../lib/scenario.js";

const WELL_BEHAVED = 4;
const AGENTS = ["dummy", "summarize", "search"] as const;
const MiB = 1024 * 1024;
const HEAD = "POST /v1/invoke HTTP/1.1\r\nHost: aip\r\nContent-Type: application/json\r\n";

interface Health {
  pid: number;
  agents: Record<string, { pid: number | null }>;
}

/** Write bytes on a new connection; resolve when the server closes it (or after `capMs`). */
function sendAndWaitClose(socket: string, bytes: string | Buffer, capMs: number): Promise<void> {
  return new Promise((resolve) => {
    const c = connect(socket, () => c.write(bytes));
    const timer = setTimeout(() => c.destroy(), capMs);
    c.on("data", () => undefined);
    c.on("error", () => undefined);
    c.on("close", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function invoke(socket: string, body: string): Promise<unknown> {
  return httpRequest(socket, { body, timeoutMs: 30_000 }).catch(() => undefined);
}

/** The neighbour: every abuse in its own loop until `stop`; returns how many of each it sent. */
function neighbour(socket: string, workspace: string): { stop(): Promise<Record<string, number>> } {
  let running = true;
  const counts: Record<string, number> = {};
  const loop = async (name: string, step: () => Promise<unknown>): Promise<void> => {
    counts[name] = 0;
    while (running) {
      await step().catch(() => undefined);
      counts[name]++;
    }
  };
  const held: Socket[] = [];
  // Clients that never read: 10 connections, each writing 300 KB of `{}` lines.
  for (let i = 0; i < 10; i++) {
    const c = connect(socket, () => {
      c.pause();
      c.write("{}\n".repeat(100_000));
    });
    c.on("error", () => undefined);
    held.push(c);
  }
  // Unfinished bodies: 5 connections that declare 100 bytes and send 10 (answered 408 in time).
  for (let i = 0; i < 5; i++) {
    const c = connect(socket, () => c.write(`${HEAD}Content-Length: 100\r\n\r\n{"action":`));
    c.on("error", () => undefined);
    c.on("data", () => undefined);
    held.push(c);
  }
  const atLimitShell = JSON.stringify({ action: "echo", context: { source_code: "" }, constraints: {} });
  const atLimit = atLimitShell.replace('"source_code":""', `"source_code":"${"a".repeat(MiB - atLimitShell.length)}"`);
  const grows = JSON.stringify({ action: "echo", context: { n: [] }, constraints: {} }).replace(
    "[]",
    `[${Array(64_000).fill("1e20").join(",")}]`,
  );
  const flood = `${echoBody()}\n`.repeat(10_000);
  const search = (query: string, paths?: string[]): string =>
    JSON.stringify({
      action: "search",
      context: { workspace_root: workspace, query },
      constraints: { refresh_ms: 0, ...(paths ? { paths } : {}) },
    });
  const deep = JSON.stringify({
    action: "summarize",
    context: { source_code: `const a = ${"[".repeat(50_000)}${"]".repeat(50_000)};\n`, language: "typescript" },
    constraints: {},
  });
  let churn = 0;
  const loops = [
    loop("bad_chunk", () =>
      sendAndWaitClose(socket, `${HEAD}Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`, 5000),
    ),
    loop("ndjson_flood_10k", () => ndjsonExchange(socket, flood, { timeoutMs: 60_000 })),
    loop("line_at_limit", () => ndjsonExchange(socket, `${atLimit}\n`, { timeoutMs: 30_000 })),
    loop("growing_numbers", () => invoke(socket, grows)),
    loop("redos_search", () =>
      Promise.all([
        invoke(socket, search("A".repeat(200_000))),
        invoke(socket, search("pool", ["**/*a*a*a*a*a*a*a*b"])),
      ]),
    ),
    loop("deep_nesting", () => invoke(socket, deep)),
    loop("file_churn", async () => {
      const name = join(workspace, `churn-${churn++ % 20}.ts`);
      writeFileSync(name, "export function churn(): number { return 1; }\n");
      const searched = invoke(socket, search("churn"));
      rmSync(name, { force: true });
      await searched;
    }),
  ];
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
      for (const c of held) c.destroy();
      return counts;
    },
  };
}

export const hostile: Scenario = {
  name: "hostile",
  title: "Hostile neighbour: 4 well-behaved echo clients, alone and beside a client abusing every limit",
  async run(ctx) {
    const rounds = ctx.quick ? 1 : 3;
    const durationMs = ctx.quick ? 3000 : 8000;
    const dir = benchDir();
    const socket = join(dir, "h.sock");
    const workspace = join(dir, "ws");
    mkdirSync(join(workspace, "src"), { recursive: true });
    for (let i = 0; i < 200; i++)
      writeFileSync(
        join(workspace, "src", `m${i}.ts`),
        `/** Module ${i}: adaptive pool helpers. */\nexport function pool${i}(n: number): number {\n  return n * ${i};\n}\n`,
      );
    const config = join(dir, "hostile.json");
    writeFileSync(
      config,
      JSON.stringify({
        socket,
        agent_socket_dir: join(dir, "agents"),
        mode: "embedded",
        vetting: "off",
        agents: AGENTS.map((name) => ({
          name,
          command: [join(DIST, `agents/${name}/main.js`)],
          manifest: join(ROOT, `manifests/${name}.json`),
        })),
        limits: { health_interval_ms: 60_000 },
      }),
    );
    const agency = await startProc(AIP, ["up", "--config", config, "--log", join(dir, "hostile.log")], socket);
    try {
      const health = (await waitHealthy(socket, 60_000)) as unknown as Health;
      const pids: Record<string, number> = { orchestrator: health.pid };
      for (const name of AGENTS) if (health.agents[name]?.pid) pids[name] = health.agents[name].pid;
      const limits: Record<string, number> = { orchestrator: 256 };
      for (const name of AGENTS)
        limits[name] =
          memoryBytes(
            (
              (await import(join(ROOT, `manifests/${name}.json`), { with: { type: "json" } })) as {
                default: { resources: { memory: string } };
              }
            ).default.resources.memory,
          ) / MiB;
      const peak: Record<string, number> = {};
      const sent: Record<string, number>[] = [];
      const measure = async (withNeighbour: boolean) => {
        const n = withNeighbour ? neighbour(socket, workspace) : undefined;
        const sampler = setInterval(() => {
          for (const [name, pid] of Object.entries(pids)) peak[name] = Math.max(peak[name] ?? 0, rssMiB(pid));
        }, 100);
        const client = httpKeepAlive(socket, WELL_BEHAVED);
        try {
          return await closedLoop(client, WELL_BEHAVED, durationMs, () => echoBody());
        } finally {
          clearInterval(sampler);
          await client.close();
          if (n) sent.push(await n.stop());
        }
      };
      const cmp = await interleave(
        "[hostile] 4 echo clients",
        [
          { name: "alone", measure: () => measure(false) },
          { name: "with neighbour", measure: () => measure(true) },
        ],
        rounds,
        ctx.progress,
      );
      const alone = cmp.median.alone!;
      const beside = cmp.median["with neighbour"]!;
      const failures = Object.values(cmp.rounds)
        .flat()
        .reduce((a, r) => a + r.errors, 0);
      const after = (await waitHealthy(socket, 60_000)) as unknown as Health;
      const restarts = Object.entries(after.agents)
        .filter(([name, a]) => a.pid !== pids[name])
        .map(([name]) => name);
      const rows = [
        [
          "alone",
          alone.rps,
          alone.p50_ms,
          alone.p95_ms,
          alone.p99_ms,
          1,
          Object.values(cmp.rounds.alone!).reduce((a, r) => a + r.errors, 0),
        ],
        [
          "with neighbour",
          beside.rps,
          beside.p50_ms,
          beside.p95_ms,
          beside.p99_ms,
          ratio(beside.p99_ms, alone.p99_ms),
          Object.values(cmp.rounds["with neighbour"]!).reduce((a, r) => a + r.errors, 0),
        ],
      ];
      const rssRows = Object.keys(pids).map((name) => [
        name,
        peak[name] ?? null,
        limits[name] ?? null,
        (peak[name] ?? 0) <= (limits[name] ?? Infinity) ? "yes" : "NO",
      ]);
      const markdown = [
        `${WELL_BEHAVED} keep-alive clients send echo in a closed loop for ${durationMs} ms, alone and while one neighbour abuses every limit at once (see bench/scenarios/hostile.ts); ${rounds} interleaved rounds, medians. \`aip up\` with dummy, summarize and search. Well-behaved failures in all rounds: ${failures}. Agents restarted: ${restarts.length ? restarts.join(", ") : "none"}. Neighbour requests per round: ${JSON.stringify(sent)}.`,
        "",
        table(["well-behaved clients", "req/s", "p50 ms", "p95 ms", "p99 ms", "p99 vs alone", "failures"], rows),
        "",
        table(["process", "peak RSS MiB (all rounds)", "limit MiB", "within"], rssRows),
      ].join("\n");
      return {
        parameters: { rounds, duration_ms: durationMs, well_behaved: WELL_BEHAVED, agents: AGENTS },
        results: { ...cmp, peak_rss_mib: peak, limits_mib: limits, neighbour_sent: sent, failures, restarts },
        markdown,
      };
    } finally {
      await agency.stop();
    }
  },
};
