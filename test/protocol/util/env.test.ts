/**
 * The configuration registry (protocol/util/env.ts): one rule per kind of value, a bad value is an error
 * naming the variable, docs/operations.md's table is the one the registry makes, and every `AIP_*` name
 * the sources read is registered.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { execFileSync, spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import {
  ENV_VARS,
  EnvError,
  checkEnv,
  envFlag,
  envInt,
  envList,
  envString,
  envTable,
} from "../../../protocol/util/env.js";
import { DIST, DUMMY, ROOT, tempDir } from "../../helpers.js";

const START = "<!-- env-table:start (generated from protocol/util/env.ts; test/protocol/util/env.test.ts) -->";
const END = "<!-- env-table:end -->";

describe("protocol/util/env.ts", () => {
  it("reads each kind by its rule, with the registered fallback when unset or empty", () => {
    expect(envInt("AIP_MODEL_CONTEXT", {})).toBe(2048);
    expect(envInt("AIP_MODEL_CONTEXT", { AIP_MODEL_CONTEXT: "" })).toBe(2048);
    expect(envInt("AIP_MODEL_CONTEXT", { AIP_MODEL_CONTEXT: "4096" })).toBe(4096);
    expect(envInt("AIP_MODEL_THREADS", {})).toBeUndefined();
    expect(envString("AIP_MODE", { AIP_MODE: "systemd" })).toBe("systemd");
    expect(envFlag("AIP_HOSTILE_BREAKDOWN", { AIP_HOSTILE_BREAKDOWN: "1" })).toBe(true);
    expect(envFlag("AIP_HOSTILE_BREAKDOWN", {})).toBe(false);
    expect(envList("AIP_HOSTILE_ABUSES", { AIP_HOSTILE_ABUSES: "a,,b" }, ",")).toEqual(["a", "b"]);
  });

  it("a bad value is an EnvError naming the variable, the rule and the value, never a fallback", () => {
    const bad: [string, string, RegExp][] = [
      ["AIP_TYPED_HEAP_MB", "lots", /^AIP_TYPED_HEAP_MB must be an integer from 128 to 16384, got "lots"$/],
      ["AIP_TYPED_HEAP_MB", "64", /from 128 to 16384, got "64"/],
      ["AIP_MODEL_THREADS", "1.5", /^AIP_MODEL_THREADS must be an integer/],
      ["AIP_HEALTH_PORT", "0x50", /^AIP_HEALTH_PORT must be an integer from 1 to 65535/],
    ];
    for (const [name, value, message] of bad) {
      const read = (): unknown => envInt(name as "AIP_TYPED_HEAP_MB", { [name]: value });
      expect(read, name).toThrow(EnvError);
      expect(read, name).toThrow(message);
    }
    expect(() => envString("AIP_MODE", { AIP_MODE: "cluster" })).toThrow(
      'AIP_MODE must be one of embedded, systemd, got "cluster"',
    );
    expect(() => envFlag("AIP_KEEP_TMP", { AIP_KEEP_TMP: "yes" })).toThrow('AIP_KEEP_TMP must be 0 or 1, got "yes"');
  });

  it("checkEnv names every bad variable of the scopes asked for, and only those", () => {
    const env = { AIP_MODE: "cluster", AIP_TYPED_BUDGET_MS: "-1", AIP_FUZZ_SEED: "x", AIP_MODEL: "/m.gguf" };
    expect(() => checkEnv(env, ["orchestrator", "agents"])).toThrow(
      /Invalid environment:\n {2}AIP_MODE must be one of embedded, systemd, got "cluster"\n {2}AIP_TYPED_BUDGET_MS must be an integer from 0 to 60000, got "-1"$/,
    );
    expect(() => checkEnv(env, ["agents"])).toThrow(/AIP_TYPED_BUDGET_MS/);
    expect(() => checkEnv(env, ["agents"])).not.toThrow(/AIP_MODE/);
    expect(() => checkEnv({ AIP_MODEL: "/m.gguf", AIP_LOG_LEVEL: "debug" }, ["orchestrator", "agents"])).not.toThrow();
  });

  it("docs/operations.md holds the table the registry makes", () => {
    const doc = readFileSync(join(ROOT, "docs/operations.md"), "utf8");
    const start = doc.indexOf(START);
    const end = doc.indexOf(END);
    expect(start, `docs/operations.md lacks ${START}`).toBeGreaterThan(-1);
    expect(doc.slice(start + START.length + 1, end), "paste this table into docs/operations.md").toBe(envTable());
  });

  it("every AIP_* variable the sources read is registered", () => {
    const files = execFileSync("git", ["ls-files", "*.ts", "*.js", "*.mjs"], { cwd: ROOT, encoding: "utf8" })
      .split("\n")
      .filter((f) => f !== "" && !f.startsWith("test/fixtures/"));
    const read = new Set<string>();
    const pattern =
      /\b(?:process\.env|env)(?:\.(AIP_[A-Z0-9_]+)|\[\s*"(AIP_[A-Z0-9_]+)"\s*\])|"(AIP_[A-Z0-9_]+)"\s*(?:satisfies|\))/g;
    for (const f of files) {
      for (const m of readFileSync(join(ROOT, f), "utf8").matchAll(pattern)) {
        const name = m[1] ?? m[2] ?? m[3]!;
        if (!name.startsWith("AIP_ERR_")) read.add(name);
      }
    }
    expect(read.size).toBeGreaterThan(20);
    expect([...read].filter((n) => !(n in ENV_VARS)).sort()).toEqual([]);
  });

  it("aip up and an agent executable stop at start, exit 2, naming the bad variable", () => {
    const t = tempDir();
    try {
      const up = spawnSync(
        process.execPath,
        [join(DIST, "scripts/aip.js"), "up", "--socket", join(t.dir, "aip.sock")],
        {
          env: { ...process.env, AIP_TYPED_HEAP_MB: "lots" },
          encoding: "utf8",
          timeout: 60_000,
        },
      );
      expect(up.status, up.stderr).toBe(2);
      expect(up.stderr).toContain('AIP_TYPED_HEAP_MB must be an integer from 128 to 16384, got "lots"');
      const agent = spawnSync(process.execPath, [DUMMY, "--listen", join(t.dir, "d.sock")], {
        env: { ...process.env, AIP_LOG_LEVEL: "loud" },
        encoding: "utf8",
        timeout: 60_000,
      });
      expect(agent.status, agent.stderr).toBe(2);
      expect(agent.stderr).toContain(
        'AIP_LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent, got "loud"',
      );
    } finally {
      t.cleanup();
    }
  });
});
