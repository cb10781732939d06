import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DIST, tempDir } from "../../helpers.js";

/** Run node with stdout going to `out` (a real file, as journald's stream is a real socket) and wait for the exit. */
async function runTo(out: string, args: string[], env: Record<string, string>): Promise<number | null> {
  const fd = openSync(out, "w");
  const journal = `${statSync(out).dev}:${statSync(out).ino}`;
  const child = spawn(process.execPath, args, {
    stdio: ["ignore", fd, "ignore"],
    env: { ...process.env, JOURNAL_STREAM: env.JOURNAL_STREAM ?? journal, ...env },
  });
  closeSync(fd);
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

const LOGS = `
  const { createLogger } = await import(${JSON.stringify(join(DIST, "protocol/util/log.js"))});
  const log = createLogger({ agentName: "t", destination: 1, level: "debug" });
  log.debug({ event: "d" }, "debug"); log.info({ event: "i" }, "info"); log.warn({ event: "w" }, "warn");
  log.error({ event: "e" }, "error"); log.fatal({ event: "f" }, "fatal");
`;

describe("journald priorities on stdout", () => {
  it("under systemd (JOURNAL_STREAM names stdout) each line starts with its sd-daemon priority, the JSON unchanged", async () => {
    const t = tempDir("aipj-");
    const out = join(t.dir, "journal");
    expect(await runTo(out, ["--input-type=module", "-e", LOGS], {})).toBe(0);
    const lines = readFileSync(out, "utf8").trim().split("\n");
    expect(lines.map((l) => /^<(\d)>/.exec(l)?.[1])).toEqual(["7", "6", "4", "3", "2"]);
    const json = lines.map((l) => JSON.parse(l.replace(/^<\d>/, "")) as Record<string, unknown>);
    expect(json.map((j) => [j.level, j.event, j.agent_name])).toEqual([
      ["debug", "d", "t"],
      ["info", "i", "t"],
      ["warn", "w", "t"],
      ["error", "e", "t"],
      ["fatal", "f", "t"],
    ]);
    t.cleanup();
  });

  it("elsewhere (no JOURNAL_STREAM, or one naming another file) the lines are plain JSON", async () => {
    const t = tempDir("aipj-");
    const out = join(t.dir, "plain");
    writeFileSync(join(t.dir, "other"), "");
    const other = statSync(join(t.dir, "other"));
    for (const journal of ["", `${other.dev}:${other.ino}`]) {
      expect(await runTo(out, ["--input-type=module", "-e", LOGS], { JOURNAL_STREAM: journal })).toBe(0);
      const lines = readFileSync(out, "utf8").trim().split("\n");
      expect(lines).toHaveLength(5);
      for (const l of lines) expect(l.startsWith("{")).toBe(true);
    }
    t.cleanup();
  });

  it("aip up's start failure is filed at priority 3 (err)", async () => {
    const t = tempDir("aipj-");
    const config = join(t.dir, "agency.json");
    writeFileSync(
      config,
      JSON.stringify({
        socket: join(t.dir, "aip.sock"),
        vetting: "off",
        agents: [
          { name: "dummy", command: [join(DIST, "agents/dummy/main.js")], manifest: join(t.dir, "missing.json") },
        ],
      }),
    );
    const out = join(t.dir, "journal");
    expect(await runTo(out, [join(DIST, "scripts/aip.js"), "up", "--config", config], { AIP_LOG_LEVEL: "info" })).toBe(
      1,
    );
    const lines = readFileSync(out, "utf8").trim().split("\n");
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) {
      const m = /^<(\d)>(\{.*\})$/.exec(l);
      expect(m, l).not.toBeNull();
      const level = (JSON.parse(m![2]!) as { level: string }).level;
      expect(Number(m![1]), l).toBe({ error: 3, warn: 4, info: 6 }[level]);
    }
    expect(
      lines.some((l) => l.startsWith("<3>") && l.includes('"event":"start_failed"') && l.includes("missing.json")),
    ).toBe(true);
    t.cleanup();
  });
});
