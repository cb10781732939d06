/**
 * Scenario: a hostile neighbour. One client abuses the front door and the agents (bad chunk sizes and
 * unfinished bodies, a 10,000-line NDJSON flood, clients that never read, lines at the limit and
 * numbers that grow on re-encoding, ReDoS-shaped search input, deeply nested source, files deleted
 * under a search) while 4 well-behaved clients call echo. Reports their p99 and failures alone and
 * with the neighbour (interleaved rounds), and the peak RSS of the orchestrator and of each agent
 * against its manifest. Targets: no failures, p99 <= 3x, orchestrator <= 256 MiB, agents within their
 * manifests.
 */
import { fork } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadavg } from "node:os";
import { processStats } from "../../orchestrator/procstat.js";
import { memoryBytes } from "../../protocol/schemas.js";
import { httpKeepAlive } from "../lib/clients.js";
import { closedLoop } from "../lib/loadgen.js";
import { AIP, DIST, ROOT, benchDir, rssMiB, startProc, waitHealthy } from "../lib/procs.js";
import { ABUSES, type Abuse } from "../lib/neighbour.js";
import { echoBody, interleave, ratio, table, type Scenario } from "../lib/scenario.js";

const WELL_BEHAVED = 4;
const AGENTS = ["dummy", "summarize", "search"] as const;
const MiB = 1024 * 1024;
const NEIGHBOUR = join(DIST, "bench/lib/neighbour.js");

interface Health {
  pid: number;
  agents: Record<string, { pid: number | null }>;
}

/**
 * The abuses to run (AIP_HOSTILE_ABUSES=a,b; default all) and whether to also measure each one alone
 * (AIP_HOSTILE_BREAKDOWN=1: which of them still hurts the well-behaved clients).
 */
function chosenAbuses(): Abuse[] {
  const list = process.env.AIP_HOSTILE_ABUSES?.split(",").filter(Boolean) ?? [...ABUSES];
  const unknown = list.filter((a) => !(ABUSES as readonly string[]).includes(a));
  if (unknown.length)
    throw new Error(`AIP_HOSTILE_ABUSES: unknown ${unknown.join(", ")} (known: ${ABUSES.join(", ")})`);
  return list as Abuse[];
}

/** Start the neighbour in its own process; `stop` ends it and returns what it sent. */
async function startNeighbour(
  socket: string,
  workspace: string,
  abuses: Abuse[],
): Promise<{ pid: number; stop(): Promise<Record<string, number>> }> {
  const child = fork(NEIGHBOUR, [socket, workspace, abuses.join(",")], {
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  await new Promise<void>((resolve, reject) => {
    child.once("message", () => resolve());
    child.once("exit", (code) => reject(new Error(`neighbour exited (${code}) before starting`)));
  });
  return {
    pid: child.pid!,
    stop: () =>
      new Promise((resolve) => {
        child.once("message", (counts) => resolve(counts as Record<string, number>));
        child.send("stop");
      }),
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
    // AIP_BENCH_CPU_PROF=DIR: write the orchestrator's V8 CPU profile there (bench/lib/profile-summary.ts reads it).
    const prof = process.env.AIP_BENCH_CPU_PROF;
    const agency = await startProc(
      process.execPath,
      [
        ...(prof ? ["--cpu-prof", `--cpu-prof-dir=${prof}`] : []),
        AIP,
        "up",
        "--config",
        config,
        "--log",
        join(dir, "hostile.log"),
      ],
      socket,
      {},
      true,
    );
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
      const abuses = chosenAbuses();
      /** CPU seconds each process spent in each measured round (where the machine's two cores went). */
      const cpu: { contender: string; load_1m: number; seconds: Record<string, number> }[] = [];
      const measure = async (name: string, withAbuses: Abuse[] | undefined) => {
        const n = withAbuses ? await startNeighbour(socket, workspace, withAbuses) : undefined;
        const procs: Record<string, number> = { ...pids, ...(n ? { neighbour: n.pid } : {}) };
        const cpuNow = (): Record<string, number> => ({
          ...Object.fromEntries(Object.entries(procs).map(([k, pid]) => [k, processStats(pid)?.cpuSeconds ?? 0])),
          bench: (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
        });
        const before = cpuNow();
        const sampler = setInterval(() => {
          for (const [name, pid] of Object.entries(pids)) peak[name] = Math.max(peak[name] ?? 0, rssMiB(pid));
        }, 100);
        const client = httpKeepAlive(socket, WELL_BEHAVED);
        try {
          return await closedLoop(client, WELL_BEHAVED, durationMs, () => echoBody());
        } finally {
          clearInterval(sampler);
          const after = cpuNow();
          cpu.push({
            contender: name,
            load_1m: Math.round(loadavg()[0]! * 10) / 10,
            seconds: Object.fromEntries(
              Object.keys(after).map((k) => [k, Math.round(((after[k] ?? 0) - (before[k] ?? 0)) * 100) / 100]),
            ),
          });
          await client.close();
          if (n) sent.push(await n.stop());
        }
      };
      const cmp = await interleave(
        "[hostile] 4 echo clients",
        [
          { name: "alone", measure: () => measure("alone", undefined) },
          { name: "with neighbour", measure: () => measure("with neighbour", abuses) },
          ...(process.env.AIP_HOSTILE_BREAKDOWN === "1"
            ? abuses.map((a) => ({ name: `only ${a}`, measure: () => measure(`only ${a}`, [a]) }))
            : []),
        ],
        rounds,
        ctx.progress,
      );
      const alone = cmp.median.alone!;
      const failures = Object.values(cmp.rounds)
        .flat()
        .reduce((a, r) => a + r.errors, 0);
      const after = (await waitHealthy(socket, 60_000)) as unknown as Health;
      const restarts = Object.entries(after.agents)
        .filter(([name, a]) => a.pid !== pids[name])
        .map(([name]) => name);
      const rows = Object.entries(cmp.median).map(([name, m]) => [
        name,
        m.rps,
        m.p50_ms,
        m.p95_ms,
        m.p99_ms,
        name === "alone" ? 1 : ratio(m.p99_ms, alone.p99_ms),
        cmp.rounds[name]!.reduce((n, r) => n + r.errors, 0),
      ]);
      const rssRows = Object.keys(pids).map((name) => [
        name,
        peak[name] ?? null,
        limits[name] ?? null,
        (peak[name] ?? 0) <= (limits[name] ?? Infinity) ? "yes" : "NO",
      ]);
      const cpuProcs = [...new Set(cpu.flatMap((c) => Object.keys(c.seconds)))];
      const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? 0;
      const cpuRows = Object.keys(cmp.median).map((name) => {
        const mine = cpu.filter((c) => c.contender === name);
        return [name, med(mine.map((c) => c.load_1m)), ...cpuProcs.map((p) => med(mine.map((c) => c.seconds[p] ?? 0)))];
      });
      const markdown = [
        `${WELL_BEHAVED} keep-alive clients send echo in a closed loop for ${durationMs} ms, alone and while one neighbour abuses every limit at once (see bench/scenarios/hostile.ts); ${rounds} interleaved rounds, medians. \`aip up\` with dummy, summarize and search. Well-behaved failures in all rounds: ${failures}. Agents restarted: ${restarts.length ? restarts.join(", ") : "none"}. Neighbour requests per round: ${JSON.stringify(sent)}.`,
        "",
        table(["well-behaved clients", "req/s", "p50 ms", "p95 ms", "p99 ms", "p99 vs alone", "failures"], rows),
        "",
        table(["process", "peak RSS MiB (all rounds)", "limit MiB", "within"], rssRows),
        "",
        `CPU seconds each process used per round of ${durationMs} ms (median over the rounds; 2 cores give at most ${(2 * durationMs) / 1000}):`,
        "",
        table(["well-behaved clients", "load avg", ...cpuProcs], cpuRows),
      ].join("\n");
      return {
        parameters: { rounds, duration_ms: durationMs, well_behaved: WELL_BEHAVED, agents: AGENTS, abuses },
        results: {
          ...cmp,
          peak_rss_mib: peak,
          limits_mib: limits,
          neighbour_sent: sent,
          cpu_seconds: cpu,
          failures,
          restarts,
        },
        markdown,
      };
    } finally {
      await agency.stop();
    }
  },
};
