/** The conformance kit as a vitest suite: one test per check, for any agent executable. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHECKS, type CheckResult } from "../tools/conformance/kit.js";

/** `run` runs the kit (e.g. `() => runConformance(EXE)`); `teardown` cleans up what it needed. */
export function conformanceSuite(title: string, run: () => Promise<CheckResult[]>, teardown?: () => void): void {
  describe(title, () => {
    let results: CheckResult[] = [];
    // The kit starts the agent a score of times; for the heavier agents the suite's load stretches that to
    // minutes.
    beforeAll(async () => {
      results = await run();
    }, 600_000);
    afterAll(() => teardown?.());

    it("ran every check", () => {
      expect(results.length).toBeGreaterThanOrEqual(CHECKS.length);
    });
    for (const check of CHECKS) {
      it(check.name, () => {
        const r = results.find((x) => x.name === check.name);
        expect(r, "check did not run").toBeDefined();
        expect(r!.reason ?? "").toBe("");
        expect(r!.ok).toBe(true);
      });
    }
  });
}
