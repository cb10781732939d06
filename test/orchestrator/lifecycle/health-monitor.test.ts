import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { AgentRecord } from "../../../orchestrator/core/agent.js";
import { FixedLoadSampler } from "../../../orchestrator/core/load.js";
import { startAgency as startEntry } from "../../../orchestrator/entry.js";
import { parseConfig } from "../../../orchestrator/core/config.js";
import { applyResourceRule, rotationLogLevel } from "../../../orchestrator/request/router.js";
import type { AgentPool } from "../../../orchestrator/pool/agent-pool.js";
import { httpRequest } from "../../../protocol/transport/client.js";
import { ManifestSchema } from "../../../protocol/contract/schemas.js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { DIST, ROOT, tempDir } from "../../helpers.js";
import { FIXTURE_AGENT, LogSink, manifestFor, startAgency, until, type Agency } from "../harness.js";

const run = promisify(execFile);
let agency: Agency | undefined;
afterEach(async () => {
  await agency?.stop();
  agency = undefined;
});

const get = async (path: string): Promise<{ status: number; json: Record<string, any> }> => {
  const r = await httpRequest(agency!.socket, { path });
  return { status: r.status, json: JSON.parse(r.body) as Record<string, any> };
};

async function aipHealth(...args: string[]): Promise<{ code: number; stdout: string }> {
  try {
    const r = await run(process.execPath, [`${DIST}/scripts/aip.js`, "health", "--socket", agency!.socket, ...args]);
    return { code: 0, stdout: r.stdout };
  } catch (err) {
    const e = err as { code: number; stdout: string };
    return { code: e.code, stdout: e.stdout };
  }
}

describe("/livez and /readyz", () => {
  it("ready while every action has an agent; 503 naming the action whose only agent is down; live throughout", async () => {
    agency = await startAgency(
      [
        { name: "a", capabilities: ["echo"] },
        { name: "b", capabilities: ["other"] },
      ],
      { restart_initial_ms: 60_000 },
    );
    expect(await get("/readyz")).toEqual({
      status: 200,
      json: { status: "ready", actions: { echo: ["a@1.0.0"], other: ["b@1.0.0"] } },
    });
    const b = agency.orchestrator.agents.find((x) => x.name === "b")!;
    process.kill(b.pid!, "SIGKILL");
    await until(() => b.state === "restarting", 20_000, "b restarting");
    expect(await get("/readyz")).toEqual({
      status: 503,
      json: { status: "not_ready", unavailable_actions: ["other"], actions: { echo: ["a@1.0.0"], other: [] } },
    });
    const live = await get("/livez");
    expect(live.status).toBe(200);
    expect(live.json).toMatchObject({ status: "alive", pid: process.pid });
  });
});

describe("aip health", () => {
  it("shows a degraded agent as degraded (exit 0), and fails it with --strict", async () => {
    // A fixed load of 0: this machine's real load must not take the heavy agent out of rotation here.
    agency = await startAgency(
      [
        { name: "heavy", capabilities: ["echo"], cpu: "2000m", env: { FIXTURE_DEGRADED: "no model configured" } },
        { name: "light", capabilities: ["echo"] },
      ],
      {},
      { load: new FixedLoadSampler(0) },
    );
    const plain = await aipHealth();
    expect(plain.stdout).toMatch(/^heavy\s+1\.0\.0\s+degraded\s+.*no model configured$/m);
    expect(plain.stdout).toMatch(/^light\s+1\.0\.0\s+healthy\s/m);
    expect(plain.code).toBe(0);
    expect((await aipHealth("--strict")).code).toBe(1);
    // /healthz says the same: the agent's word and the agency's.
    const h = await get("/healthz");
    expect(h.json.status).toBe("degraded");
    expect(h.json.agents.heavy).toMatchObject({
      status: "healthy",
      degraded: true,
      degraded_reason: "no model configured",
    });
    expect(h.json.agents.light).toMatchObject({ status: "healthy", degraded: false });
    const agents = await run(process.execPath, [`${DIST}/scripts/aip.js`, "agents", "--socket", agency.socket]);
    expect(agents.stdout).toMatch(/^heavy\s+1\.0\.0\s+degraded\s+echo/m);
  });

  it("ignores host CPU unless --strict: a heavy agent out of rotation still exits 0", async () => {
    const load = new FixedLoadSampler(0);
    agency = await startAgency(
      [
        { name: "heavy", capabilities: ["echo"], cpu: "2000m" },
        { name: "light", capabilities: ["echo"] },
      ],
      { cpu_sample_ms: 20, cpu_samples: 2 },
      { load },
    );
    load.value = 0.99;
    await until(
      () => !agency!.orchestrator.agents.find((a) => a.name === "heavy")!.admission.admitted,
      20_000,
      "heavy out",
    );
    const plain = await aipHealth();
    expect(plain.stdout).toMatch(/^heavy\s+1\.0\.0\s+healthy \(out: host cpu\)/m);
    expect(plain.code).toBe(0);
    expect((await aipHealth("--strict")).code).toBe(1);
    expect((await get("/readyz")).status).toBe(200);
  });
});

describe("the ready line", () => {
  it("names a degraded agent degraded, as aip health and /healthz do", async () => {
    const t = tempDir("aiprl-");
    const logs = new LogSink();
    const agents = [
      { name: "heavy", env: { FIXTURE_DEGRADED: "no model configured" } },
      { name: "light", env: {} },
    ].map(({ name, env }) => {
      const manifest = join(t.dir, `${name}.json`);
      writeFileSync(manifest, JSON.stringify(manifestFor({ name, capabilities: ["echo"] })));
      return { name, command: [FIXTURE_AGENT], manifest, env: { FIXTURE_MANIFEST: manifest, ...env } };
    });
    const config = parseConfig(
      {
        socket: join(t.dir, "aip.sock"),
        agent_socket_dir: join(t.dir, "agents"),
        state_dir: join(t.dir, "state"),
        vetting: "off",
        agents,
        limits: { health_interval_ms: 60_000, warm_standby: "off" },
      },
      ROOT,
    );
    const running = await startEntry(config, { deps: { logDestination: logs, load: new FixedLoadSampler(0) } });
    try {
      expect(running.agents).toBe("heavy@1.0.0:degraded light@1.0.0:healthy");
      expect(logs.lines.find((l) => l.msg === "agency ready")).toMatchObject({
        agents: "heavy@1.0.0:degraded light@1.0.0:healthy",
      });
    } finally {
      await running.stop("test");
      t.cleanup();
    }
  });
});

describe("CPU admission hysteresis", () => {
  const record = (name: string, cpu: string): AgentRecord =>
    new AgentRecord(
      { name, command: ["x"], manifestPath: "", socket: "", enabled: true, env: {}, allowEnv: [], versions: {} },
      ManifestSchema.parse(manifestFor({ name, cpu, capabilities: ["complete"] })),
      {} as AgentPool,
    );
  const rule = { threshold: 0.85, readmitBelow: 0.75, samples: 3 };

  it("out after 3 samples above 0.85, back after 3 below 0.75; nothing changes in between", () => {
    const heavy = record("heavy", "1000m");
    const agents = [heavy, record("lite", "100m")];
    const trace = (loads: number[]): string =>
      loads
        .map((l) => (applyResourceRule(agents, l, rule).length > 0 ? (heavy.admission.admitted ? "in" : "out") : "."))
        .join(" ");
    expect(trace([0.9, 0.9, 0.8, 0.9, 0.9, 0.84])).toBe(". . . . . .");
    expect(trace([0.86, 0.9, 0.95])).toBe(". . out");
    expect(trace([0.8, 0.7, 0.7, 0.76, 0.7, 0.7])).toBe(". . . . . .");
    expect(trace([0.7])).toBe("in");
  });

  it("with readmitSamples, the quiet must hold that long before the agent comes back", () => {
    const heavy = record("heavy", "1000m");
    const agents = [heavy, record("lite", "100m")];
    const r = { ...rule, readmitSamples: 5 };
    const trace = (loads: number[]): string =>
      loads
        .map((l) => (applyResourceRule(agents, l, r).length > 0 ? (heavy.admission.admitted ? "in" : "out") : "."))
        .join(" ");
    expect(trace([0.9, 0.9, 0.9])).toBe(". . out");
    // A burst inside the quiet starts the count again.
    expect(trace([0.5, 0.5, 0.5, 0.5, 0.9, 0.5, 0.5, 0.5, 0.5])).toBe(". . . . . . . . .");
    expect(trace([0.5])).toBe("in");
  });

  it("logs a change at info while a lighter available agent serves its action, at warn when none does", () => {
    const heavy = record("heavy", "1000m");
    const lite = record("lite", "100m");
    const agents = [heavy, lite];
    for (let i = 0; i < 3; i++) applyResourceRule(agents, 0.95, rule);
    expect(heavy.admission.admitted).toBe(false);
    // The fixture records never started: mark the light one ready so that it serves.
    lite.markReady(1);
    expect(lite.available).toBe(true);
    expect(rotationLogLevel(heavy, agents)).toBe("info");
    // A peer that serves the action but is not available (never started) does not count.
    const alone = [heavy, record("other", "100m")];
    expect(rotationLogLevel(heavy, alone)).toBe("warn");
    for (let i = 0; i < 3; i++) applyResourceRule(agents, 0.1, rule);
    expect(heavy.admission.admitted).toBe(true);
    expect(rotationLogLevel(heavy, alone)).toBe("info");
  });

  it("a load wandering around the threshold: the old rule flapped, hysteresis does not", () => {
    // A deterministic 4-minute trace of 1 s samples between 0.78 and 0.92 (the range a busy host showed).
    let x = 7;
    const loads = Array.from(
      { length: 240 },
      () => ((x = (x * 1103515245 + 12345) % 2 ** 31), 0.78 + (x / 2 ** 31) * 0.14),
    );
    const count = (r: typeof rule): number => {
      const agents = [record("heavy", "1000m"), record("lite", "100m")];
      return loads.reduce((n, l) => n + applyResourceRule(agents, l, r).length, 0);
    };
    const old = count({ threshold: 0.85, readmitBelow: 0.85, samples: 1 });
    const now = count(rule);
    console.log(`admission changes over 240 samples in 0.78-0.92: no hysteresis ${old}, hysteresis ${now}`);
    expect(old).toBeGreaterThan(30);
    expect(now).toBeLessThanOrEqual(2);
  });
});
