import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LineBatchFile, createLogger, handLine, isoTimestamp, openDestination } from "../../../protocol/util/log.js";

const lines = (file: string): Record<string, unknown>[] =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("the log file", () => {
  it("gets the lines of one event-loop turn in one batch, in order, none lost, owner-only", async () => {
    const dir = mkdtempSync(join(tmpdir(), "aip-log-"));
    try {
      const file = join(dir, "sub", "aip.log");
      const log = createLogger({ agentName: "orchestrator", destination: openDestination(file) });
      for (let i = 0; i < 500; i++) log.info({ event: "request", n: i }, "request");
      // Not yet written: the batch goes when this turn ends.
      expect(readFileSync(file, "utf8")).toBe("");
      await new Promise((r) => setImmediate(r));
      const got = lines(file);
      expect(got.map((l) => l.n)).toEqual(Array.from({ length: 500 }, (_, i) => i));
      expect(got[0]).toMatchObject({ level: "info", agent_name: "orchestrator", event: "request", msg: "request" });
      expect(Date.parse(got[0]!.timestamp as string)).toBeGreaterThan(Date.now() - 60_000);
      expect(statSync(file).mode & 0o777).toBe(0o600);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("writes at once when a batch grows past 64 KiB, and on flush", () => {
    const dir = mkdtempSync(join(tmpdir(), "aip-log-"));
    try {
      const file = join(dir, "aip.log");
      const dest = new LineBatchFile(file);
      const line = `${"x".repeat(1023)}\n`;
      for (let i = 0; i < 70; i++) dest.write(line);
      expect(readFileSync(file, "utf8").length).toBeGreaterThanOrEqual(64 * 1024);
      dest.flushSync();
      expect(readFileSync(file, "utf8").length).toBe(70 * 1024);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("writes the timestamp as ISO 8601 in UTC, to the millisecond", () => {
    const before = Date.now();
    const stamp = isoTimestamp();
    expect(stamp).toMatch(/^,"timestamp":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"$/);
    const t = Date.parse(stamp.slice(14, -1));
    expect(t).toBeGreaterThanOrEqual(before);
    expect(t).toBeLessThanOrEqual(Date.now());
  });
});

describe("the silent logger", () => {
  it("has every level off, children included, and takes no hand-built line", () => {
    const log = createLogger({ agentName: "summarize", destination: false, level: "trace" });
    const child = log.child({ trace_id: "t1" });
    for (const l of [log, child]) {
      for (const level of ["fatal", "error", "warn", "info", "debug", "trace"])
        expect(l.isLevelEnabled(level)).toBe(false);
      expect(l.level).toBe("silent");
      l.error({ event: "crash", err: new Error("x") }, "nothing to write");
    }
    expect(handLine(log, "info")('"msg":"request"')).toBe(false);
    let flushed = false;
    log.flush(() => (flushed = true));
    expect(flushed).toBe(true);
  });
});
