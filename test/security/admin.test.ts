/**
 * Findings 1 and 2 of the security review (docs/security.md): no client can make the orchestrator run
 * a program through the admin API, and every run of a candidate happens inside the vetting sandbox.
 */
import { existsSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../orchestrator/core/config.js";
import { agentEnvironment } from "../../orchestrator/core/agent-env.js";
import { vetAgent } from "../../orchestrator/lifecycle/vet/index.js";
import { httpRequest } from "../../protocol/transport/client.js";
import { ROOT, tempDir } from "../helpers.js";
import { manifestFor, startAgency, type Agency } from "../orchestrator/harness.js";

const PROBE = join(ROOT, "test/fixtures/agents/home-probe.mjs");
let agency: Agency | undefined;
afterEach(async () => {
  await agency?.stop();
  agency = undefined;
});

const post = async (socket: string, path: string, body: unknown) => {
  const r = await httpRequest(socket, { method: "POST", path, body: JSON.stringify(body) });
  return { status: r.status, json: JSON.parse(r.body) as Record<string, any> };
};

describe("the admin API runs nothing a client sends", () => {
  it("the reported canary RCE executes nothing, on the public socket or the admin socket", async () => {
    agency = await startAgency([{ name: "dummy" }]);
    const pwned = join(agency.dir, "pwned");
    const attack = { agent: "dummy", version: "6", command: ["/bin/sh", "-c", `id > ${pwned}; echo x`] };
    const publicAnswer = await post(agency.socket, "/v1/admin/canary/start", attack);
    expect(publicAnswer.status).toBe(403);
    expect(publicAnswer.json.error).toMatchObject({ type: "AIP_ERR_FORBIDDEN" });
    expect(publicAnswer.json.error.detail).toContain(agency.adminSocket);
    const adminAnswer = await post(agency.adminSocket, "/v1/admin/canary/start", attack);
    expect(adminAnswer.status).toBe(403);
    expect(adminAnswer.json.error.detail).toMatch(/command is never accepted/);
    const envAttack = await post(agency.adminSocket, "/v1/admin/canary/start", {
      agent: "dummy",
      version: "6",
      env: { NODE_OPTIONS: "--require /x.cjs" },
    });
    expect(envAttack.json.error.detail).toMatch(/env is never accepted/);
    // Every admin route is refused on the public socket, the forced health check included.
    expect((await post(agency.socket, "/v1/admin/health-check", {})).status).toBe(403);
    expect(existsSync(pwned)).toBe(false);
    expect(agency.orchestrator.agents.map((a) => a.name)).toEqual(["dummy"]);
  });

  it("the admin socket is owner-only (0600)", async () => {
    agency = await startAgency([{ name: "dummy" }]);
    const { statSync } = await import("node:fs");
    expect(statSync(agency.adminSocket).mode & 0o777).toBe(0o600);
  });

  it("a config env that loads foreign code is refused unless allow_env names it", () => {
    const agent = {
      name: "dummy",
      command: ["/bin/true"],
      manifest: "manifests/dummy.json",
      env: { NODE_OPTIONS: "--require /x.cjs", LD_PRELOAD: "/x.so" },
    };
    expect(() => parseConfig({ agents: [agent] }, ROOT)).toThrow(
      /agents\[0\]\.env: NODE_OPTIONS, LD_PRELOAD can load foreign code.*allow_env/,
    );
    expect(
      parseConfig({ agents: [{ ...agent, allow_env: ["NODE_OPTIONS", "LD_PRELOAD"] }] }, ROOT).agents[0]!.env
        .NODE_OPTIONS,
    ).toBe("--require /x.cjs");
    // Inherited from the orchestrator's own environment, such names never reach an agent.
    const env = agentEnvironment(
      { env: {}, workspaceRoots: ["/tmp"] },
      { PATH: "/usr/bin", NODE_OPTIONS: "--require /x.cjs", LD_PRELOAD: "/x.so", PYTHONPATH: "/x" },
    );
    expect(env).toEqual({
      PATH: "/usr/bin",
      AIP_LOG_LEVEL: "info",
      AIP_WORKSPACE_ROOTS: "/tmp",
      AIP_WORKSPACE_ROOTS_DEFAULTS: "off",
    });
  });

  it("a canary that misbehaves only outside a scratch-looking $HOME is caught: vetting runs with the real HOME path", async () => {
    const id = `${process.pid}-${Date.now()}`;
    agency = await startAgency(
      [
        {
          name: "svc",
          versions: {
            "2.0.0": {
              command: PROBE,
              env: { FIXTURE_MANIFEST: "{dir}/svc-2.json", PROBE_ID: id, PROBE_MARKER: "{dir}/marker" },
            },
          },
        },
      ],
      {},
      {},
      { vetting: "required" },
    );
    writeFileSync(join(agency.dir, "svc-2.json"), JSON.stringify(manifestFor({ name: "svc", version: "2.0.0" })));
    const r = await post(agency.adminSocket, "/v1/admin/canary/start", {
      agent: "svc",
      version: "2.0.0",
      percent: 100,
    });
    expect(r.status).toBe(403);
    expect(r.json.error.type).toBe("AIP_ERR_FORBIDDEN");
    expect(r.json.error.detail).toContain(`.aip-home-probe-${id}`);
    expect(r.json.error.detail).toMatch(/write: /);
    // It ran only inside the sandbox: its private HOME and /tmp are gone, nothing reached the real ones.
    expect(existsSync(join(homedir(), `.aip-home-probe-${id}`))).toBe(false);
    expect(existsSync(join(agency.dir, "marker"))).toBe(false);
    expect(agency.orchestrator.agents.filter((a) => a.role === "canary")).toEqual([]);
    // The traffic stays on the stable version.
    expect(agency.orchestrator.canary.percent("svc")).toBe(0);
  });
});

describe("vetting runs the candidate sandboxed", () => {
  it("a rejected candidate's payload never touches the host: writes land in the sandbox's private home and /tmp", async () => {
    const t = tempDir("aipsec-");
    try {
      const id = `v${process.pid}`;
      const marker = join(t.dir, "marker");
      const env = {
        ...agentEnvironment({ env: {}, workspaceRoots: [] }),
        FIXTURE_MANIFEST: join(ROOT, "manifests/dummy.json"),
        PROBE_ID: id,
        PROBE_MARKER: marker,
      };
      const report = await vetAgent(PROBE, {
        env,
        configEnv: { FIXTURE_MANIFEST: join(ROOT, "manifests/dummy.json") },
      });
      expect(report.ok).toBe(false);
      expect(report.reasons.join("\n")).toContain(`.aip-home-probe-${id}`);
      expect(existsSync(marker)).toBe(false);
      expect(existsSync(join(homedir(), `.aip-home-probe-${id}`))).toBe(false);
    } finally {
      t.cleanup();
    }
  });

  it("the Python third-party agent passes inside the sandbox; a pyenv-shim interpreter is refused with the fix", async () => {
    const py = join(ROOT, "test/fixtures/agents/python-agent.py");
    const report = await vetAgent(py);
    expect(report.reasons).toEqual([]);
    expect(report.manifest?.name).toBe("pyecho");
    // The same agent behind `#!/usr/bin/env python3` with a version-manager shim first on PATH.
    const t = tempDir("aipshim-");
    try {
      const shims = join(t.dir, ".pyenv/shims");
      const { mkdirSync, readFileSync, chmodSync } = await import("node:fs");
      mkdirSync(shims, { recursive: true });
      writeFileSync(
        join(shims, "python3"),
        '#!/usr/bin/env bash\nset -e\nexec "$(command -v pyenv)" exec "$program" "$@"\n',
      );
      chmodSync(join(shims, "python3"), 0o755);
      const agent = join(t.dir, "agent.py");
      writeFileSync(agent, readFileSync(py, "utf8").replace("#!/usr/bin/python3", "#!/usr/bin/env python3"));
      chmodSync(agent, 0o755);
      const shimmed = await vetAgent(agent, { pathEnv: `${shims}:/usr/bin:/bin` });
      expect(shimmed.ok).toBe(false);
      expect(shimmed.reasons[0]).toMatch(
        /python3 resolves to .*\.pyenv\/shims\/python3, a pyenv shim.*Point the #! line at the real interpreter, e\.g\. #!\/usr\/bin\/python3/,
      );
    } finally {
      t.cleanup();
    }
  });
});
