/** Finding 3 (docs/security.md): a vetting verdict nobody can forge; state and log files owner-only. */
import { chmodSync, copyFileSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { VetCache, vetAgent } from "../../orchestrator/lifecycle/vet/index.js";
import { ROOT, tempDir } from "../helpers.js";
import { startAgency } from "../orchestrator/harness.js";

const BAD = join(ROOT, "test/fixtures/vet/write-home.cjs");

describe("the vetting cache", () => {
  const t = tempDir("aipvc-sec-");
  afterAll(() => t.cleanup());

  it("a forged 'passed' entry under the matching key is not trusted: the agent is vetted again and fails", async () => {
    const exe = join(t.dir, "write-home.cjs");
    copyFileSync(BAD, exe);
    copyFileSync(join(ROOT, "test/fixtures/vet/_agent.cjs"), join(t.dir, "_agent.cjs"));
    chmodSync(exe, 0o755);
    const file = join(t.dir, "state/vet-cache.json");
    // Vet once for real: the file now holds a signed "failed" entry.
    const honest = await vetAgent(exe, { cache: new VetCache(file) });
    expect(honest.ok).toBe(false);
    // Forge it: flip the verdict to "passed", keep every other field (the key matches).
    const data = JSON.parse(readFileSync(file, "utf8")) as Record<string, any>;
    const entry = data[exe];
    entry.report = {
      ...entry.report,
      ok: true,
      reasons: [],
      checks: entry.report.checks.map((c: any) => ({ ...c, ok: true, violations: [] })),
    };
    writeFileSync(file, JSON.stringify(data));
    const cache = new VetCache(file);
    expect(cache.rejected).toEqual([{ path: exe, reason: "bad signature" }]);
    const again = await vetAgent(exe, { cache });
    expect(again.cached).toBeUndefined();
    expect(again.ok).toBe(false);
    expect(again.reasons.join("\n")).toMatch(/fixture-state .*outside the write roots/);
    // An entry with no signature at all, and one with wrong field types: dropped, never a crash.
    writeFileSync(
      file,
      JSON.stringify({ [exe]: { ...entry, mac: undefined }, "/x": { fingerprint: "nope", policyKey: 1, report: [] } }),
    );
    const loaded = new VetCache(file);
    expect(loaded.size).toBe(0);
    expect(loaded.rejected.map((r) => r.path).sort()).toEqual(["/x", exe].sort());
    writeFileSync(file, "[1,2");
    expect(new VetCache(file).size).toBe(0);
  });

  it("the cache and its key are created 0600", async () => {
    const file = join(t.dir, "modes/vet-cache.json");
    const cache = new VetCache(file);
    await vetAgent(join(ROOT, "test/fixtures/vet/good-shell.sh"), { cache });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(`${file}.key`).mode & 0o777).toBe(0o600);
    expect(statSync(join(t.dir, "modes")).mode & 0o777).toBe(0o700);
  });
});

describe("state files", () => {
  it("canary state is written 0600 in a 0700 state directory", async () => {
    const agency = await startAgency([{ name: "svc" }]);
    try {
      agency.orchestrator.canary.stop(); // saves the state file
      expect(statSync(join(agency.dir, "state/canary.json")).mode & 0o777).toBe(0o600);
      expect(statSync(join(agency.dir, "state")).mode & 0o777).toBe(0o700);
    } finally {
      await agency.stop();
    }
  });
});
