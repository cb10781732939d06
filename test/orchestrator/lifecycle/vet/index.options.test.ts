import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { vetAgent } from "../../../../orchestrator/lifecycle/vet/index.js";
import { DUMMY, tempDir } from "../../../helpers.js";
import { rulesOf } from "./helpers.js";

describe("vetAgent options", () => {
  const t = tempDir("aipvo-");
  afterAll(() => t.cleanup());

  it("vets a config command [cmd, ...args] as vetAgent(cmd, { args }): `node main.js` passes", async () => {
    const report = await vetAgent("node", { args: [DUMMY] });
    expect(report.reasons).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.executable).toMatch(/\/node$/);
    expect(report.manifest?.name).toBe("dummy");
  });

  it("passes env to the agent: a log file outside the write roots is a write violation", async () => {
    // HOME is private in the sandbox: the write succeeds there, is judged, and never reaches the real home.
    const log = join(homedir(), `aipvo-${process.pid}.log`);
    const report = await vetAgent(DUMMY, { env: { PATH: process.env.PATH!, HOME: homedir(), AIP_LOG_FILE: log } });
    expect(rulesOf(report)).toEqual(["write"]);
    expect(report.reasons.some((r) => r.includes(log))).toBe(true);
    expect(existsSync(log)).toBe(false);
  });
});
