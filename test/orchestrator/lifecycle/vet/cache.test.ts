import { copyFileSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_POLICY, VetCache, vetAgent } from "../../../../orchestrator/lifecycle/vet/index.js";
import { tempDir } from "../../../helpers.js";
import { CORPUS } from "./helpers.js";

describe("vetting cache and could-not-vet", () => {
  const t = tempDir("aipvc-");
  afterAll(() => t.cleanup());

  it("reuses a verdict while path, size, mtime, sha256 and policy are unchanged; persists it to a file", async () => {
    const exe = join(t.dir, "agent.sh");
    copyFileSync(join(CORPUS, "good-shell.sh"), exe);
    const file = join(t.dir, "cache/vet.json");
    const cache = new VetCache(file);
    const first = await vetAgent(exe, { cache });
    expect(first.ok).toBe(true);
    expect(first.cached).toBeUndefined();
    const second = await vetAgent(exe, { cache });
    expect(second.cached).toBe(true);
    expect(second.sha256).toBe(first.sha256);

    // A restarted orchestrator reads the same verdict from the file.
    expect((await vetAgent(exe, { cache: new VetCache(file) })).cached).toBe(true);

    // A new mtime (same content) or another policy means vetting again.
    utimesSync(exe, new Date(), new Date(Date.now() + 5000));
    expect((await vetAgent(exe, { cache })).cached).toBeUndefined();
    expect((await vetAgent(exe, { cache, policy: { ...DEFAULT_POLICY, allow_gpu: true } })).cached).toBeUndefined();
  });

  it("cannot vet without strace, says how to install it, and caches nothing", async () => {
    const cache = new VetCache();
    const report = await vetAgent(join(CORPUS, "good-shell.sh"), { cache, tools: { strace: "/nonexistent/strace" } });
    expect(report).toMatchObject({ ok: false, couldNotVet: true, checks: [] });
    expect(report.reasons[0]).toMatch(/strace is not installed.*apt-get install -y strace/);
    expect(report.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(cache.size).toBe(0);
  });

  it("rejects a path that does not exist as a failed executable check, not a crash", async () => {
    const report = await vetAgent(join(t.dir, "nope"));
    expect(report.ok).toBe(false);
    expect(report.couldNotVet).toBe(false);
    expect(report.reasons).toEqual([expect.stringMatching(/^executable: .*does not exist/)]);
  });
});
