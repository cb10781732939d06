#!/usr/bin/env node
/**
 * Start to ready of `aip up` (docs/operations.md, "Start time"): `node dist/bench/start-to-ready.js
 * [--runs N] [--config FILE] [--vetting MODE] [--tag NAME]`. Every run starts the agency on the same
 * socket and state directory under a fresh temporary directory, as a restart does: the first run vets
 * every agent (cold) and fills the verdict cache, the next N reuse it (warm). The time is
 * from spawning `aip up` to its `ready` log line; the run is then stopped with SIGTERM. Prints each run
 * and the median, and writes bench/results/<date>-start-to-ready[-<tag>].json.
 *
 * Beside the wall clock, which the host's other load stretches, each run records the CPU time the
 * whole process tree (orchestrator, agents, standbys, vetting runs) had spent when it said ready, and
 * when the first agent process was spawned: figures that compare across loads.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "../tools/aip/command.js";
import { percentileOf } from "../protocol/util/percentile.js";

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), "../..");
const AIP = join(ROOT, "dist/scripts/aip.js");

interface Run {
  kind: "cold" | "warm";
  ready_ms: number;
  /** Agents the ready line named with their state. */
  agents: string;
  /** Agents whose verdict came from the cache (vet log lines with cached: true). */
  cached: number;
  vetted: number;
  /** When each agent was ready, from the start (ms): where the time went. */
  agents_ready_ms: Record<string, number>;
  /** When the first agent process was spawned (ms from the start). */
  first_agent_starting_ms: number | undefined;
  /** CPU time (user + system) of `aip up` and every process under it when it said ready (ms). */
  tree_cpu_ms: number;
}

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** CPU time (ms) of `pid` and all its live descendants, with the children they have reaped (/proc). */
function treeCpuMs(pid: number): number {
  const procs = new Map<number, { ppid: number; ticks: number }>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // Fields from the state (3rd): ppid 4th, utime 14th, stime 15th, cutime 16th, cstime 17th.
      procs.set(Number(entry), {
        ppid: Number(f[1]),
        ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]),
      });
    } catch {
      // exited meanwhile
    }
  }
  let ticks = 0;
  const todo = [pid];
  while (todo.length > 0) {
    const p = todo.pop()!;
    ticks += procs.get(p)?.ticks ?? 0;
    for (const [child, info] of procs) if (info.ppid === p) todo.push(child);
  }
  return ticks * TICK_MS;
}

const args = parseArgs(process.argv.slice(2), ["runs", "config", "vetting", "tag"]);
const runs = typeof args.flags.runs === "string" ? Number(args.flags.runs) : 3;
const config = typeof args.flags.config === "string" ? resolve(args.flags.config) : undefined;
const vetting = typeof args.flags.vetting === "string" ? args.flags.vetting : "warn";
const tag = typeof args.flags.tag === "string" ? `-${args.flags.tag}` : "";

const state = mkdtempSync(join(tmpdir(), "aip-start-bench-"));

/** One start: spawn `aip up`, wait for the ready line, stop it, wait for the exit. */
async function once(kind: Run["kind"], i: number): Promise<Run> {
  const env = {
    ...process.env,
    AIP_SOCKET: join(state, "aip.sock"),
    AIP_AGENT_SOCKET_DIR: join(state, "agents"),
    AIP_STATE_DIR: join(state, "state"),
    AIP_VETTING: vetting,
  };
  const started = performance.now();
  const child = spawn(process.execPath, [AIP, "up", ...(config ? ["--config", config] : [])], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  let cached = 0;
  let vetted = 0;
  const agentsReady: Record<string, number> = {};
  let firstStarting: number | undefined;
  const ready = await new Promise<{ ms: number; agents: string; cpu: number }>((resolveReady, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.on("line", (line) => {
      let o: Record<string, unknown>;
      try {
        o = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      if (o.cached === true) cached++;
      if (o.cached === false) vetted++;
      if (o.event === "agent_starting") firstStarting ??= Math.round(performance.now() - started);
      if (o.event === "agent_ready") agentsReady[String(o.agent_name)] = Math.round(performance.now() - started);
      if (o.event === "ready" && o.msg === "agency ready")
        resolveReady({ ms: performance.now() - started, agents: String(o.agents), cpu: treeCpuMs(child.pid!) });
    });
    void exited.then(() => reject(new Error(`aip up exited before it was ready (run ${i})`)));
  });
  child.kill("SIGTERM");
  await exited;
  return {
    kind,
    ready_ms: Math.round(ready.ms),
    agents: ready.agents,
    cached,
    vetted,
    agents_ready_ms: agentsReady,
    first_agent_starting_ms: firstStarting,
    tree_cpu_ms: ready.cpu,
  };
}

const results: Run[] = [];
try {
  for (let i = 0; i <= runs; i++) {
    const r = await once(i === 0 ? "cold" : "warm", i);
    results.push(r);
    console.log(`${r.kind} ${r.ready_ms} ms (vet verdicts: ${r.cached} cached, ${r.vetted} vetted)  ${r.agents}`);
    console.log(
      `  process tree CPU at ready ${r.tree_cpu_ms} ms; first agent spawned at ${r.first_agent_starting_ms} ms`,
    );
    console.log(`  agents ready at (ms): ${JSON.stringify(r.agents_ready_ms)}`);
  }
} finally {
  rmSync(state, { recursive: true, force: true });
}
const median = (xs: number[]): number =>
  percentileOf(
    [...xs].sort((a, b) => a - b),
    50,
  );
const warmRuns = results.filter((r) => r.kind === "warm");
const warmMs = median(warmRuns.map((r) => r.ready_ms));
const warmCpu = median(warmRuns.map((r) => r.tree_cpu_ms));
console.log(
  `warm start to ready: median ${warmMs} ms, ${warmCpu} ms of CPU, over ${warmRuns.length} runs (load ${loadavg()[0]!.toFixed(1)})`,
);
const out = join(ROOT, "bench/results", `${new Date().toISOString().slice(0, 10)}-start-to-ready${tag}.json`);
writeFileSync(
  out,
  `${JSON.stringify(
    {
      bench: "start-to-ready",
      vetting,
      config: config ?? "manifests/agency.json",
      host: { cpus: cpus().length, load1: loadavg()[0] },
      warm_median_ms: warmMs,
      warm_median_tree_cpu_ms: warmCpu,
      runs: results,
    },
    null,
    2,
  )}\n`,
);
console.log(`wrote ${out}`);
