/** `npm run conformance`'s command line: --only narrows the battery to the checks it names, and says so when none match. */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { DUMMY, ROOT } from "../helpers.js";

const exec = promisify(execFile);
const CLI = join(ROOT, "dist/scripts/conformance.js");

describe("npm run conformance --only", () => {
  it("runs just the checks whose name contains the text (and the stderr check), each named", async () => {
    const { stdout } = await exec(process.execPath, [CLI, DUMMY, "--only", "GOOD REQUEST SUCCEEDS"], { cwd: ROOT });
    const ran = stdout
      .split("\n")
      .filter((l) => /^(PASS|FAIL) {2}/.test(l))
      .map((l) => l.slice(6).replace(/ \(\d+ ms\)$/, ""));
    expect(ran).toEqual([
      "one-shot: a good request succeeds, trace id generated",
      "socket HTTP: a good request succeeds with status 200; trace id echoed and generated",
      "socket: nothing written to stderr while serving",
    ]);
    expect(stdout).toContain("3 passed, 0 failed");
    // Two agent processes and a CLI start one after another: beside the suite's load that overran the
    // default test timeout.
  }, 120_000);

  it("a text no check's name contains is a usage error (exit 2) naming it", async () => {
    const err = (await exec(process.execPath, [CLI, DUMMY, "--only", "no-such-check"]).catch((e: unknown) => e)) as {
      code: number;
      stderr: string;
    };
    expect(err.code).toBe(2);
    expect(err.stderr).toContain('no check\'s name contains "no-such-check"');
  });
});
