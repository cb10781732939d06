/** Scenario 4 (agents): RSS of the orchestrator and of each agent, idle and under load. Other agent scenarios add files beside this one. */
import { join } from "node:path";
import { httpKeepAlive } from "../lib/clients.js";
import { closedLoop } from "../lib/loadgen.js";
import { benchDir, ROOT, rssMiB, startProc, waitHealthy, AIP } from "../lib/procs.js";
import { echoBody, table, type ScenarioBody } from "../lib/scenario.js";

/** A request that exercises each bundled agent; agents without one here stay idle during the load phase. */
const LOAD: Record<string, () => string> = {
  dummy: () => echoBody(),
};
const CONCURRENCY = 100;

interface Health {
  pid: number;
  agents: Record<string, { pid: number | null }>;
}

export const agentsRss: ScenarioBody = {
  async run(ctx) {
    const durationMs = ctx.quick ? 1500 : 6000;
    const dir = benchDir();
    const socket = join(dir, "rss.sock");
    // The checked-in agency config: every bundled agent that is enabled.
    const agency = await startProc(
      AIP,
      ["up", "--config", join(ROOT, "manifests/agency.json"), "--log", join(dir, "rss.log")],
      socket,
      {
        AIP_SOCKET: socket,
        AIP_AGENT_SOCKET_DIR: join(dir, "rss-agents"),
      },
    );
    try {
      const health = (await waitHealthy(socket)) as unknown as Health;
      const pids: Record<string, number> = { orchestrator: health.pid };
      for (const [name, a] of Object.entries(health.agents)) if (a.pid) pids[name] = a.pid;
      const sample = (): Record<string, number> =>
        Object.fromEntries(Object.entries(pids).map(([n, pid]) => [n, rssMiB(pid)]));
      await new Promise((r) => setTimeout(r, 1000)); // settle after start-up before the idle sample
      const idle = sample();
      ctx.progress(`[agents-rss] idle: ${JSON.stringify(idle)}`);
      const peak: Record<string, number> = { ...idle };
      const sampler = setInterval(() => {
        for (const [n, v] of Object.entries(sample())) peak[n] = Math.max(peak[n] ?? 0, v);
      }, 100);
      const client = httpKeepAlive(socket, CONCURRENCY);
      const bodies = Object.entries(LOAD).filter(([n]) => pids[n]);
      let i = 0;
      const load = await closedLoop(client, CONCURRENCY, durationMs, () => bodies[i++ % bodies.length]![1]());
      clearInterval(sampler);
      await client.close();
      ctx.progress(`[agents-rss] under load (${load.rps} req/s): ${JSON.stringify(peak)}`);
      const rows = Object.keys(pids).map((n) => [
        n,
        idle[n] ?? null,
        peak[n] ?? null,
        n === "orchestrator" || LOAD[n] ? "yes" : "idle",
      ]);
      const markdown = [
        `\`aip up\` with the checked-in \`manifests/agency.json\`. Idle: 1 s after every agent is ready. Under load: the peak of 100 ms samples while ${CONCURRENCY} keep-alive clients send requests through the orchestrator for ${durationMs} ms (${load.rps} req/s). VmRSS from /proc, MiB.`,
        "",
        table(["process", "idle RSS MiB", "peak RSS under load MiB", "loaded"], rows),
      ].join("\n");
      return {
        parameters: { duration_ms: durationMs, concurrency: CONCURRENCY, loaded: Object.keys(LOAD) },
        results: { idle, peak, load },
        markdown,
      };
    } finally {
      await agency.stop();
    }
  },
};
