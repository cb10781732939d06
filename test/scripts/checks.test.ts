/** The checks `npm test` runs before the tests, side by side (scripts/checks.mjs). */
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT, tempDir } from "../helpers.js";

const CHECKS = join(ROOT, "scripts/checks.mjs");

/** Run checks.mjs in `cwd`; resolves with its status and output whether it failed or not. */
async function checks(cwd: string, names: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [CHECKS, ...names], {
      cwd,
      encoding: "utf8",
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe("scripts/checks.mjs", () => {
  const t = tempDir("aipchecks-");
  afterAll(() => t.cleanup());

  it("is what npm test runs before vitest: build, typecheck, lint and prettier", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
    const [before, after] = pkg.scripts.test!.split(" && ");
    expect(after).toBe("vitest run");
    expect(before!.split(" ").slice(0, 2)).toEqual(["node", "scripts/checks.mjs"]);
    expect(before!.split(" ").slice(2).sort()).toEqual(["build", "format:check", "lint", "typecheck"]);
  });

  it("prints each check's output whole under its name, and fails when any check failed, after all ended", async () => {
    const script = (lines: string[], code: number): string =>
      `node -e "${lines.map((l) => `console.log('${l}');console.error('${l} on stderr');`).join("")}process.exit(${code})"`;
    writeFileSync(
      join(t.dir, "package.json"),
      JSON.stringify({
        name: "checks-fixture",
        private: true,
        scripts: { good: script(["good one", "good two"], 0), bad: script(["bad one"], 3) },
      }),
    );
    const r = await checks(t.dir, ["bad", "good"]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe("checks failed: bad");
    // One block per check, its lines together after its heading, whichever ended first.
    const blocks = r.stdout.split(/^(?=> )/m).map((b) => b.trimEnd());
    expect(blocks).toHaveLength(2);
    const good = blocks.find((b) => b.startsWith("> good: "))!;
    expect(good).toMatch(/^> good: ok in \d+\.\d s\n/);
    expect(good.split("\n").slice(1).sort()).toEqual(
      ["good one", "good one on stderr", "good two", "good two on stderr"].sort(),
    );
    const bad = blocks.find((b) => b.startsWith("> bad: "))!;
    expect(bad).toMatch(/^> bad: FAILED \(exit 3\) in \d+\.\d s\n/);
    expect(bad.split("\n").slice(1).sort()).toEqual(["bad one", "bad one on stderr"]);

    expect(await checks(t.dir, ["good"])).toMatchObject({ code: 0, stderr: "" });
  });

  it("names its usage when given no check", async () => {
    const r = await checks(t.dir, []);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^usage: node scripts\/checks\.mjs SCRIPT/);
  });
});
