/**
 * Vetting agent-complete configured for an inference server: it passes (the key file is read, nothing
 * connects), and the key appears in neither the report nor the strace trace of its runs.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { agentEnvironment } from "../../../../orchestrator/core/agent-env.js";
import { traceRun } from "../../../../orchestrator/lifecycle/vet/dynamic.js";
import { vetAgent } from "../../../../orchestrator/lifecycle/vet/index.js";
import { findSandbox } from "../../../../orchestrator/lifecycle/vet/sandbox.js";
import { ROOT, tempDir } from "../../../helpers.js";

const COMPLETE = join(ROOT, "dist/agents/complete/main.js");
const KEY = "sk-vet-9a8b7c6d5e4f3a2b1c0d";

describe("vetting an agent whose model is on an inference server", () => {
  const t = tempDir("aipvetkey-");
  afterAll(() => t.cleanup());
  const keyFile = join(t.dir, "model-key");
  writeFileSync(keyFile, `${KEY}\n`, { mode: 0o600 });
  const configEnv = { AIP_MODEL_URL: "http://127.0.0.1:9", AIP_MODEL_NAME: "m", AIP_MODEL_KEY_FILE: keyFile };
  const env = agentEnvironment({ env: configEnv, workspaceRoots: [] });

  it("passes, and the report does not carry the key", async () => {
    const report = await vetAgent(COMPLETE, { env, configEnv });
    expect(report.reasons).toEqual([]);
    expect(report.ok).toBe(true);
    expect(JSON.stringify(report)).not.toContain(KEY);
  });

  it("the trace shows the key file opened, and never the key", async () => {
    const sandbox = await findSandbox();
    if (typeof sandbox === "string") return expect.fail(`no sandbox here: ${sandbox}`);
    const run = await traceRun(
      COMPLETE,
      // The empty-input run loads the agent (the manifest run answers before it does), so it reads the key.
      { name: "empty-input", args: [], stdin: "" },
      {
        strace: "strace",
        timeoutMs: 20_000,
        seccomp: false,
        env,
        sandbox: {
          bwrap: sandbox.bwrap,
          layout: { home: t.dir, tmpdir: "/tmp", cwd: ROOT, hide: [], keep: [keyFile, t.dir] },
        },
      },
    );
    try {
      expect(run.exitCode).toBe(0);
      const lines = run.events.map((e) => e.line).join("\n");
      expect(lines).toContain(keyFile);
      expect(lines + run.stdout + run.stderr).not.toContain(KEY);
    } finally {
      run.cleanup();
    }
  });
});
