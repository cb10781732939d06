import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { vetAgent, type VetReport } from "../../../../orchestrator/lifecycle/vet/index.js";
import { ManifestSchema } from "../../../../protocol/contract/schemas.js";
import { ROOT } from "../../../helpers.js";

/** Every `agent-*` bin of package.json that is built: all of them must pass vetting as shipped. */
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { bin: Record<string, string> };
const AGENTS = Object.entries(pkg.bin)
  .filter(([name, path]) => name.startsWith("agent-") && existsSync(join(ROOT, path)))
  .map(([name, path]) => ({ name, path: join(ROOT, path) }));

/**
 * One vetting per agent, read by both of its tests: the runs with a real request are the default runs
 * (empty input, --manifest) plus that request, under the same policy and environment, so a report
 * without violations from them is one the default vetting passes too.
 */
const reports = new Map<string, Promise<VetReport>>();
function vetted(agent: { name: string; path: string }): Promise<VetReport> {
  let report = reports.get(agent.name);
  if (!report) {
    const manifest = ManifestSchema.parse(
      JSON.parse(readFileSync(join(ROOT, "manifests", `${agent.name.slice(6)}.json`), "utf8")),
    );
    // The conformance kit's good request.
    const good = { action: manifest.capabilities[0], context: { source_code: "const a = 1;\n" }, constraints: {} };
    report = vetAgent(agent.path, { probes: [{ name: "good-request", args: [], stdin: JSON.stringify(good) }] });
    reports.set(agent.name, report);
  }
  return report;
}

describe("bundled agents pass vetting", () => {
  it("finds at least agent-dummy", () => {
    expect(AGENTS.map((a) => a.name)).toContain("agent-dummy");
  });

  for (const agent of AGENTS) {
    it(`${agent.name} passes the default vetting`, async () => {
      const report = await vetted(agent);
      expect(report.reasons).toEqual([]);
      expect(report.ok).toBe(true);
      expect(report.couldNotVet).toBe(false);
      // #!/usr/bin/env node resolves to the real node ELF, whose libraries were read.
      expect(report.interpreter[1]).toBe("/usr/bin/env");
      expect(report.libraries.some((l) => l.name.startsWith("libc.so"))).toBe(true);
      expect(report.manifest?.name).toBe(agent.name.slice("agent-".length));
    });

    it(`${agent.name} also passes while answering a real request (more of node: zod, pino, the handler)`, async () => {
      const report = await vetted(agent);
      expect(report.reasons).toEqual([]);
      expect(report.ok).toBe(true);
    });
  }
});
