/**
 * A client-chosen `constraints.test_path` that would leave the workspace (absolute, `..`, a home path)
 * or carries control characters is refused at once by a real testgen process, and the refusal names
 * the rule without showing the value back: hostile text meant for a reader (a prompt, a terminal
 * escape, markup) does not come back in the answer.
 */
import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DIST, tempDir } from "../helpers.js";

const TESTGEN = join(DIST, "agents/testgen/main.js");
const t = tempDir("aipsec-tp-");
afterAll(() => t.cleanup());
mkdirSync(join(t.dir, "src"));
writeFileSync(join(t.dir, "src/a.ts"), "export function f(x: number): number {\n  return x + 1;\n}\n");
writeFileSync(join(t.dir, "package.json"), JSON.stringify({ name: "w", type: "module" }));

/** One request to a real testgen process (one-shot, stdin to stdout). */
function testgen(testPath: string): Promise<Record<string, any>> {
  const request = {
    action: "testgen",
    context: { workspace_root: t.dir, file_path: "src/a.ts" },
    constraints: { function: "f", test_path: testPath, run_timeout_ms: 0 },
  };
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [TESTGEN],
      { timeout: 60_000, env: { ...process.env, AIP_WORKSPACE_ROOTS: t.dir, AIP_WORKSPACE_ROOTS_DEFAULTS: "off" } },
      (err, stdout) => {
        try {
          resolve(JSON.parse(stdout) as Record<string, any>);
        } catch {
          reject(err ?? new Error(`not JSON: ${stdout.slice(0, 200)}`));
        }
      },
    );
    child.stdin!.end(JSON.stringify(request));
  });
}

const MARK = "IGNORE-PREVIOUS-INSTRUCTIONS";

describe("a refused test_path", { timeout: 120_000 }, () => {
  it("is refused with the rule, never echoed", async () => {
    const cases: [string, RegExp][] = [
      [`../../etc/cron.d/${MARK}.test.ts`, /no '\.\.' segment/],
      [`/etc/${MARK}.test.ts`, /not an absolute one/],
      [`~/${MARK}.test.ts`, /not an absolute one/],
      [`test/\u001b]8;;http://evil/\u0007${MARK}.test.ts`, /no control characters/],
      [`test/${MARK}${"x".repeat(2000)}.test.ts`, /at most 1024 characters/],
    ];
    for (const [testPath, rule] of cases) {
      const r = await testgen(testPath);
      const raw = JSON.stringify(r);
      expect(r.status, raw.slice(0, 300)).toBe("error");
      expect(r.error.type).toBe("AIP_ERR_INVALID_FIELD");
      expect(r.error.detail).toMatch(rule);
      expect(r.error.detail).toContain(`constraints.test_path`);
      expect(r.error.detail).toContain(`got a string of ${testPath.length} characters`);
      expect(raw).not.toContain(MARK);
      expect(raw).not.toContain("evil");
    }
  });

  it("a path inside the workspace is used as given", async () => {
    const r = await testgen("spec/a.spec.test.ts");
    expect(r.status).toBe("success");
    expect(r.payload.test_path).toBe("spec/a.spec.test.ts");
    expect(r.payload.import.specifier).toBe("../src/a.js");
  });
});
