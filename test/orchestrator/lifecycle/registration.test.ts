import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { printedManifest } from "../../../orchestrator/lifecycle/registration.js";

/** `--manifest` runs (vetting off) are limited in the command's CPU time, not the host's wall clock. */
describe("printedManifest: the --manifest run's limit is CPU time", () => {
  const dir = mkdtempSync(join(tmpdir(), "aip-reg-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const opts = (timeoutMs: number) => ({
    layout: { home: dir, tmpdir: dir, cwd: dir, hide: [] },
    configEnv: {},
    unsandboxed: true,
    timeoutMs,
  });
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, TMPDIR: dir };

  it("a command slower in wall time than the limit but idle (a busy host) still answers", async () => {
    // `--manifest` lands in $0: the script ignores it. 600 ms of waiting, almost no CPU, against a 300 ms limit.
    const printed = await printedManifest(["sh", "-c", 'sleep 0.6; echo \'{"name":"slow"}\''], env, opts(300));
    expect(printed).toEqual({ name: "slow" });
  });

  it("a command spinning past the limit is killed and named for its CPU time", async () => {
    // Four spinners in the command's process tree: its CPU time (the tree's) outruns the wall clock's
    // WALL_FACTOR even when the test suite's other files keep both cores busy.
    const spin = "for i in 1 2 3 4; do (while :; do :; done) & done; wait";
    await expect(printedManifest(["sh", "-c", spin], env, opts(600))).rejects.toThrow(
      /--manifest failed: no answer within 600 ms of CPU time/,
    );
  });

  it("an idle hang is stopped at WALL_FACTOR times the limit", async () => {
    // `sleep 30` would end on its own later and fail otherwise: this message is the wall-time stop's.
    await expect(printedManifest(["sh", "-c", "sleep 30"], env, opts(200))).rejects.toThrow(
      /--manifest failed: no answer within 800 ms/,
    );
  });
});
