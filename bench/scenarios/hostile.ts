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
import { processStats } from "../../orchestrator/core/procstat.js";
import { memoryBytes } from "../../protocol/contract/schemas.js";
import { httpKeepAlive } from "../lib/clients.js";
import { closedLoop } from "../lib/loadgen.js";
import { DIST, ROOT, benchDir, rssMiB, startProc, waitHealthy } from "../lib/procs.js";
import { ABUSES, CONTROLS, type Abuse } from "../lib/neighbour.js";
import { echoBody, interleave, ratio, table, type ScenarioBody } from "../lib/scenario.js";
import { envFlag, envList, envString } from "../../protocol/util/env.js";

const WELL_BEHAVED = 4;
const AGENTS = ["dummy", "summarize", "search"] as const;
const MiB = 1024 * 1024;
const NEIGHBOUR = join(DIST, "bench/lib/neighbour.js");

/** One `aip up` under test: the build in dist/, or the baseline build (AIP_BENCH_BASELINE). */
interface Agency {
  label: string;
  socket: string;
  /** The orchestrator's and each agent's pid at start. */
  pids: Record<string, number>;
  stop(): Promise<void>;
}

interface Health {
  pid: number;
  agents: Record<string, { pid: number | null }>;
}

/**
 * The abuses to run (AIP_HOSTILE_ABUSES=a,b; default all) and whether to also measure each one alone
 * (AIP_HOSTILE_BREAKDOWN=1: which of them still hurts the well-behaved clients; `alsoAlone`).
 */
function chosenAbuses(): Abuse[] {
  const list = envList("AIP_HOSTILE_ABUSES", process.env, ",") ?? [...ABUSES];
  const known: readonly string[] = [...ABUSES, ...CONTROLS];
  const unknown = list.filter((a) => !known.includes(a));
  if (unknown.length) throw new Error(`AIP_HOSTILE_ABUSES: unknown ${unknown.join(", ")} (known: ${known.join(", ")})`);
  return list as Abuse[];
}

/**
 * What is also measured on its own: with AIP_HOSTILE_BREAKDOWN=1 each abuse and the controls, with
 * AIP_HOSTILE_CONTROL=1 only the controls (`cpu_burn`: CPU competition alone; AIP_HOSTILE_BURN_THREADS).
 */
function alsoAlone(abuses: Abuse[]): Abuse[] {
  const controls = CONTROLS.filter((c) => !abuses.includes(c));
  if (envFlag("AIP_HOSTILE_BREAKDOWN")) return [...abuses, ...controls];
  return envFlag("AIP_HOSTILE_CONTROL") ? controls : [];
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

export const hostile: ScenarioBody = {
  async run(ctx) {
    const rounds = ctx.quick ? 1 : 3;
    const durationMs = ctx.quick ? 3000 : 8000;
    const dir = benchDir();
    const workspace = join(dir, "ws");
    mkdirSync(join(workspace, "src"), { recursive: true });
    for (let i = 0; i < 200; i++)
      writeFileSync(
        join(workspace, "src", `m${i}.ts`),
        `/** Module ${i}: adaptive pool helpers. */\nexport function pool${i}(n: number): number {\n  return n * ${i};\n}\n`,
      );
    // AIP_BENCH_BASELINE=DIST: another build's dist/ (e.g. the previous commit's) measured in the same run,
    // interleaved, as "baseline alone" and "baseline with neighbour" (same neighbour, same workspace).
    const baselineDist = envString("AIP_BENCH_BASELINE");
    // AIP_BENCH_CPU_PROF=DIR: write the orchestrator's and the agents' V8 CPU profiles there (bench/lib/profile-summary.ts reads it).
    const prof = envString("AIP_BENCH_CPU_PROF");
    const startAgency = async (label: string, dist: string): Promise<Agency> => {
      const socket = join(dir, `${label}.sock`);
      const config = join(dir, `${label}.json`);
      writeFileSync(
        config,
        JSON.stringify({
          socket,
          agent_socket_dir: join(dir, `${label}-agents`),
          mode: "embedded",
          vetting: "off",
          agents: AGENTS.map((name) => ({
            name,
            // With AIP_BENCH_CPU_PROF, the agents of the build under test are profiled too (written at their exit).
            command: [
              ...(prof && dist === DIST ? [process.execPath, "--cpu-prof", `--cpu-prof-dir=${prof}`] : []),
              join(dist, `agents/${name}/main.js`),
            ],
            manifest: join(ROOT, `manifests/${name}.json`),
          })),
          limits: { health_interval_ms: 60_000 },
        }),
      );
      const proc = await startProc(
        process.execPath,
        [
          ...(prof && dist === DIST ? ["--cpu-prof", `--cpu-prof-dir=${prof}`] : []),
          join(dist, "scripts/aip.js"),
          "up",
          "--config",
          config,
          "--log",
          join(dir, `${label}.log`),
        ],
        socket,
        {},
        true,
      );
      try {
        const health = (await waitHealthy(socket, 60_000)) as unknown as Health;
        const pids: Record<string, number> = { orchestrator: health.pid };
        for (const name of AGENTS) if (health.agents[name]?.pid) pids[name] = health.agents[name].pid;
        return { label, socket, pids, stop: () => proc.stop() };
      } catch (err) {
        await proc.stop();
        throw err;
      }
    };
    const agencies: Agency[] = [];
    try {
      agencies.push(await startAgency("h", DIST));
      if (baselineDist) agencies.push(await startAgency("baseline", baselineDist));
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
      /** A process's key in the RSS and CPU tables: the baseline build's are prefixed. */
      const key = (a: Agency, name: string): string => (a.label === "h" ? name : `${a.label} ${name}`);
      /** CPU seconds each process spent in each measured round (where the machine's two cores went). */
      const cpu: { contender: string; load_1m: number; seconds: Record<string, number> }[] = [];
      const measure = async (name: string, agency: Agency, withAbuses: Abuse[] | undefined) => {
        const n = withAbuses ? await startNeighbour(agency.socket, workspace, withAbuses) : undefined;
        const pids = Object.fromEntries(Object.entries(agency.pids).map(([k, pid]) => [key(agency, k), pid]));
        const procs: Record<string, number> = { ...pids, ...(n ? { neighbour: n.pid } : {}) };
        const cpuNow = (): Record<string, number> => ({
          ...Object.fromEntries(Object.entries(procs).map(([k, pid]) => [k, processStats(pid)?.cpuSeconds ?? 0])),
          bench: (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
        });
        const before = cpuNow();
        const sampler = setInterval(() => {
          for (const [name, pid] of Object.entries(pids)) peak[name] = Math.max(peak[name] ?? 0, rssMiB(pid));
        }, 100);
        const client = httpKeepAlive(agency.socket, WELL_BEHAVED);
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
      const contenders = agencies.flatMap((a) => {
        const prefix = a.label === "h" ? "" : `${a.label} `;
        return [
          { name: `${prefix}alone`, measure: () => measure(`${prefix}alone`, a, undefined) },
          { name: `${prefix}with neighbour`, measure: () => measure(`${prefix}with neighbour`, a, abuses) },
          ...alsoAlone(abuses).map((x) => ({
            name: `${prefix}only ${x}`,
            measure: () => measure(`${prefix}only ${x}`, a, [x]),
          })),
        ];
      });
      const cmp = await interleave("[hostile] 4 echo clients", contenders, rounds, ctx.progress);
      const failures = Object.values(cmp.rounds)
        .flat()
        .reduce((a, r) => a + r.errors, 0);
      const restarts: string[] = [];
      for (const a of agencies) {
        const after = (await waitHealthy(a.socket, 60_000)) as unknown as Health;
        for (const [name, agent] of Object.entries(after.agents))
          if (agent.pid !== a.pids[name]) restarts.push(key(a, name));
      }
      /** A row's p99 against its own build's "alone". */
      const aloneOf = (name: string): string => (name.startsWith("baseline ") ? "baseline alone" : "alone");
      const rows = Object.entries(cmp.median).map(([name, m]) => [
        name,
        m.rps,
        m.p50_ms,
        m.p95_ms,
        m.p99_ms,
        name === aloneOf(name) ? 1 : ratio(m.p99_ms, cmp.median[aloneOf(name)]!.p99_ms),
        cmp.rounds[name]!.reduce((n, r) => n + r.errors, 0),
      ]);
      const rssRows = agencies.flatMap((a) =>
        Object.keys(a.pids).map((name) => [
          key(a, name),
          peak[key(a, name)] ?? null,
          limits[name] ?? null,
          (peak[key(a, name)] ?? 0) <= (limits[name] ?? Infinity) ? "yes" : "NO",
        ]),
      );
      const cpuProcs = [...new Set(cpu.flatMap((c) => Object.keys(c.seconds)))];
      const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? 0;
      const cpuRows = Object.keys(cmp.median).map((name) => {
        const mine = cpu.filter((c) => c.contender === name);
        return [
          name,
          med(mine.map((c) => c.load_1m)),
          ...cpuProcs.map((p) => (mine.some((c) => p in c.seconds) ? med(mine.map((c) => c.seconds[p] ?? 0)) : null)),
        ];
      });
      const markdown = [
        `${WELL_BEHAVED} keep-alive clients send echo in a closed loop for ${durationMs} ms, alone and while one neighbour abuses every limit at once (see bench/scenarios/hostile.ts); ${rounds} interleaved rounds, medians. \`aip up\` with dummy, summarize and search${baselineDist ? `; "baseline" rows: the same with the build in ${baselineDist}, in the same rounds` : ""}. Well-behaved failures in all rounds: ${failures}. Agents restarted: ${restarts.length ? restarts.join(", ") : "none"}. Neighbour requests per round: ${JSON.stringify(sent)}.`,
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
        parameters: {
          rounds,
          duration_ms: durationMs,
          well_behaved: WELL_BEHAVED,
          agents: AGENTS,
          abuses,
          ...(baselineDist ? { baseline: baselineDist } : {}),
        },
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
      await Promise.all(agencies.map((a) => a.stop()));
    }
  },
};
