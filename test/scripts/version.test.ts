/** `aip --version` and /healthz name the same version: package.json's. */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { healthz } from "../../orchestrator/request/status.js";
import { ROOT } from "../helpers.js";

const version = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;

describe("the version", () => {
  it("aip --version prints package.json's version and Node's", () => {
    for (const flag of ["--version", "-V"]) {
      const out = execFileSync(process.execPath, [join(ROOT, "dist/scripts/aip.js"), flag], { encoding: "utf8" });
      expect(out).toBe(`aip ${version} (node ${process.versions.node})\n`);
    }
  });

  it("/healthz carries the same version", () => {
    const view = healthz({
      agents: [],
      mode: "embedded",
      startedAt: Date.now(),
      startedUp: true,
      cpuLoad: 0,
      cpuThreshold: 1,
      canaryPercent: () => 0,
      canaryStatus: () => ({}),
    });
    expect(view.body.version).toBe(version);
  });
});
