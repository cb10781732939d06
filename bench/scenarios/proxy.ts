/**
 * Scenario: the orchestrator hop against reverse proxies, in front of a trivial agent that answers without
 * work (bench/lib/trivial-agent.ts). Through ÷ direct throughput, added p50/p99 and each proxy's own CPU
 * time per request (from /proc/PID/stat), over HTTP/1.1 keep-alive and NDJSON, at 1, 12, 100 and 200
 * clients. nginx and HAProxy join as peers (HTTP only) when installed; agent-dummy's own CPU per request
 * is measured direct.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { processStats } from "../../orchestrator/core/procstat.js";
import { httpKeepAlive, ndjsonConnections, type Client } from "../lib/clients.js";
import { closedLoop } from "../lib/loadgen.js";
import { AIP, DUMMY, ROOT, benchDir, startDummy, startProc, waitHealthy, type Proc } from "../lib/procs.js";
import { echoBody, ratio, table, type ScenarioBody } from "../lib/scenario.js";
import { median, round, type LatencySummary } from "../lib/stats.js";
import { envString } from "../../protocol/util/env.js";

const CONCURRENCY = [1, 12, 100, 200];
const WARMUP_MS = 300;
const TRIVIAL = join(import.meta.dirname, "../lib/trivial-agent.js");

interface Measured extends LatencySummary {
  /** CPU time the proxy (or, direct, the agent) spent per request, µs. */
  cpu_us_per_request: number | null;
}

const cpuSeconds = (pids: number[]): number => pids.reduce((s, p) => s + (processStats(p)?.cpuSeconds ?? 0), 0);

async function measure(client: Client, concurrency: number, durationMs: number, pids: number[]): Promise<Measured> {
  try {
    // Warm-up, not counted: the connections open and the JIT settles before the clock starts.
    await closedLoop(client, concurrency, WARMUP_MS, () => echoBody());
    const before = cpuSeconds(pids);
    const s = await closedLoop(client, concurrency, durationMs, () => echoBody());
    const cpu = cpuSeconds(pids) - before;
    return { ...s, cpu_us_per_request: pids.length && s.count ? round((cpu * 1e6) / s.count, 1) : null };
  } finally {
    await client.close();
  }
}

function which(bin: string): string | undefined {
  try {
    return execFileSync("sh", ["-c", `command -v ${bin}`], { encoding: "utf8" }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** nginx as a reverse proxy on a Unix socket: one worker (one process to account), keep-alive upstream. */
async function startNginx(dir: string, agentSocket: string): Promise<Proc | undefined> {
  const bin = which("nginx");
  if (!bin) return undefined;
  const socket = join(dir, "nginx.sock");
  const conf = join(dir, "nginx.conf");
  writeFileSync(
    conf,
    `daemon off; master_process off; worker_processes 1; pid ${dir}/nginx.pid; error_log ${dir}/nginx.err warn;
events { worker_connections 4096; }
http { access_log off; client_body_temp_path ${dir}/nginx-body;
  upstream agent { server unix:${agentSocket}; keepalive 256; }
  server { listen unix:${socket}; keepalive_requests 1000000;
    location / { proxy_pass http://agent; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_buffering off; } } }
`,
  );
  return startProc(bin, ["-c", conf, "-p", dir], socket, {}, true);
}

/** HAProxy as a reverse proxy on a Unix socket: one thread, connections to the agent reused. */
async function startHaproxy(dir: string, agentSocket: string): Promise<Proc | undefined> {
  const bin = which("haproxy");
  if (!bin) return undefined;
  const socket = join(dir, "haproxy.sock");
  const conf = join(dir, "haproxy.cfg");
  writeFileSync(
    conf,
    `global
  nbthread 1
  maxconn 4096
defaults
  mode http
  timeout connect 5s
  timeout client 60s
  timeout server 60s
  http-reuse always
frontend fe
  bind unix@${socket}
  default_backend be
backend be
  server agent unix@${agentSocket}
`,
  );
  return startProc(bin, ["-db", "-f", conf], socket, {}, true);
}

export const proxy: ScenarioBody = {
  async run(ctx) {
    const rounds = ctx.quick ? 1 : 3;
    const durationMs = ctx.quick ? 1000 : 2500;
    const dir = benchDir();
    const agentSocket = join(dir, "trivial.sock");
    const agent = await startProc(TRIVIAL, [agentSocket], agentSocket);
    // AIP_BENCH_CPU_PROF=DIR: write the orchestrator's V8 CPU profile there (bench/lib/profile-summary.ts reads it).
    const prof = envString("AIP_BENCH_CPU_PROF");
    const startAgency = async (name: string, aip: string): Promise<Proc> => {
      const cfg = join(dir, `${name}.json`);
      writeFileSync(
        cfg,
        JSON.stringify({
          socket: join(dir, `${name}.sock`),
          agent_socket_dir: join(dir, `${name}-agents`),
          mode: "systemd",
          vetting: "off",
          agents: [
            { name: "dummy", command: [DUMMY], manifest: join(ROOT, "manifests/dummy.json"), socket: agentSocket },
          ],
        }),
      );
      const p = await startProc(
        process.execPath,
        [
          ...(prof ? ["--cpu-prof", `--cpu-prof-dir=${prof}`] : []),
          aip,
          "up",
          "--config",
          cfg,
          "--log",
          join(dir, `${name}.log`),
        ],
        join(dir, `${name}.sock`),
        {},
        true,
      );
      await waitHealthy(p.socket);
      return p;
    };
    const agency = await startAgency("agency", AIP);
    // AIP_BENCH_BASELINE=DIST: another build's dist/ (e.g. the previous commit's) measured side by side,
    // interleaved, as "agency-baseline" and "agent-dummy-baseline".
    const baselineDist = envString("AIP_BENCH_BASELINE");
    const baseline = baselineDist
      ? await startAgency("agency-baseline", join(baselineDist, "scripts/aip.js"))
      : undefined;
    const peers: Record<string, Proc> = {};
    const notes: string[] = [];
    for (const [name, start] of [
      ["nginx", startNginx],
      ["haproxy", startHaproxy],
    ] as const) {
      const p = await start(dir, agentSocket).catch((err: Error) => {
        notes.push(`${name} did not start: ${err.message.slice(0, 200)}`);
        return undefined;
      });
      if (p) peers[name] = p;
      else if (!notes.some((n) => n.startsWith(name))) notes.push(`${name} is not installed: not measured`);
    }
    const dummyDir = benchDir();
    const dummy = await startDummy(dummyDir);
    const dummyBaseline = baselineDist
      ? await startProc(
          join(baselineDist, "agents/dummy/main.js"),
          ["--listen", join(dummyDir, "dummy-baseline.sock")],
          join(dummyDir, "dummy-baseline.sock"),
          { AIP_LOG_LEVEL: "warn" },
        )
      : undefined;
    const results: Record<string, Record<number, Record<string, Measured[]>>> = { http: {}, ndjson: {} };
    const med = (xs: Measured[], k: keyof Measured): number | null => {
      const v = xs.map((x) => x[k]).filter((x): x is number => typeof x === "number");
      return v.length ? round(median(v), 2) : null;
    };
    try {
      for (const framing of ["http", "ndjson"] as const) {
        for (const c of CONCURRENCY) {
          const targets: [string, string, number[]][] = [
            ["direct", agentSocket, [agent.child.pid!]],
            ["agency", agency.socket, [agency.child.pid!]],
          ];
          if (baseline) targets.push(["agency-baseline", baseline.socket, [baseline.child.pid!]]);
          if (framing === "http")
            for (const [name, p] of Object.entries(peers)) targets.push([name, p.socket, [p.child.pid!]]);
          if (c === 12) targets.push(["agent-dummy", dummy.socket, [dummy.child.pid!]]);
          if (c === 12 && dummyBaseline)
            targets.push(["agent-dummy-baseline", dummyBaseline.socket, [dummyBaseline.child.pid!]]);
          const out: Record<string, Measured[]> = Object.fromEntries(targets.map(([n]) => [n, []]));
          for (let r = 0; r < rounds; r++) {
            for (const [name, socket, pids] of targets) {
              const client = framing === "http" ? httpKeepAlive(socket, c) : ndjsonConnections(socket);
              const m = await measure(client, c, durationMs, pids);
              out[name]!.push(m);
              ctx.progress(
                `[proxy] ${framing} c=${c} round ${r + 1}/${rounds} ${name}: ${m.rps} req/s, p50 ${m.p50_ms} p99 ${m.p99_ms} ms, ${m.cpu_us_per_request} µs CPU/request${m.errors ? `, ${m.errors} errors` : ""}`,
              );
            }
          }
          results[framing]![c] = out;
        }
      }
    } finally {
      await Promise.all([agency.stop(), baseline?.stop()]);
      await Promise.all([
        agent.stop(),
        dummy.stop(),
        dummyBaseline?.stop(),
        ...Object.values(peers).map((p) => p.stop()),
      ]);
    }
    const rows: (string | number | null)[][] = [];
    for (const framing of ["http", "ndjson"] as const) {
      for (const c of CONCURRENCY) {
        const out = results[framing]![c]!;
        const direct = out.direct!;
        for (const name of Object.keys(out).filter((n) => n !== "direct" && !n.startsWith("agent-dummy"))) {
          const xs = out[name]!;
          const p50 = med(xs, "p50_ms");
          const p99 = med(xs, "p99_ms");
          const dp50 = med(direct, "p50_ms");
          const dp99 = med(direct, "p99_ms");
          rows.push([
            framing,
            c,
            name,
            med(direct, "rps"),
            med(xs, "rps"),
            ratio(med(xs, "rps") ?? 0, med(direct, "rps") ?? 0),
            p50 !== null && dp50 !== null ? round(p50 - dp50, 3) : null,
            p99 !== null && dp99 !== null ? round(p99 - dp99, 3) : null,
            med(xs, "cpu_us_per_request"),
          ]);
        }
      }
    }
    const dummyCpu = med(results.http![12]!["agent-dummy"]!, "cpu_us_per_request");
    const dummyNd = med(results.ndjson![12]!["agent-dummy"]!, "cpu_us_per_request");
    const trivialCpu = med(results.http![12]!.direct!, "cpu_us_per_request");
    const dummyBase = baseline
      ? ` (baseline build: ${med(results.http![12]!["agent-dummy-baseline"]!, "cpu_us_per_request")} µs over HTTP, ${med(results.ndjson![12]!["agent-dummy-baseline"]!, "cpu_us_per_request")} µs over NDJSON)`
      : "";
    const markdown = [
      `Closed loop over one Unix socket per target (HTTP/1.1 keep-alive, or NDJSON connections), ${rounds} interleaved round(s) of ${durationMs} ms per configuration; medians. "direct" is the trivial agent's own socket; "agency" is \`aip up\` in systemd mode pointed at it (vetting off, log level info: one JSON line per request to a file); nginx (one worker, keep-alive upstream) and HAProxy (one thread, \`http-reuse always\`) are the peers, HTTP only. Added p50/p99 = through − direct. CPU µs/request is the proxy process's user+system time (/proc/PID/stat) over the requests answered.`,
      "",
      table(
        [
          "framing",
          "clients",
          "through",
          "direct req/s",
          "through req/s",
          "through ÷ direct",
          "added p50 ms",
          "added p99 ms",
          "proxy CPU µs/request",
        ],
        rows,
      ),
      "",
      `CPU per request of the agents themselves at 12 clients: the trivial agent ${trivialCpu} µs (HTTP); agent-dummy ${dummyCpu} µs over HTTP, ${dummyNd} µs over NDJSON${dummyBase}.`,
      ...(notes.length ? ["", ...notes.map((n) => `Note: ${n}.`)] : []),
    ].join("\n");
    return {
      parameters: {
        rounds,
        duration_ms: durationMs,
        concurrency: CONCURRENCY,
        peers: Object.keys(peers),
        ...(baselineDist ? { baseline: baselineDist } : {}),
        notes,
      },
      results,
      markdown,
    };
  },
};
