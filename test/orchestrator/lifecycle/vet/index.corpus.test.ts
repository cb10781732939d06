import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_POLICY, vetAgent, type VetReport } from "../../../../orchestrator/lifecycle/vet/index.js";
import { tempDir } from "../../../helpers.js";
import { CORPUS, buildGpuAddonAgent, buildGpuAgent, rulesOf } from "./helpers.js";

/** Each bad agent, and the one rule (and check) it must be rejected for. */
const CORPUS_CASES: { file: string; rule: string; check: string; detail: RegExp; timeoutMs?: number }[] = [
  { file: "connect-inet.cjs", rule: "network", check: "network", detail: /AF_INET 127\.0\.0\.1:9/ },
  { file: "read-secret.cjs", rule: "sensitive-read", check: "filesystem", detail: /\/etc\/shadow/ },
  { file: "write-home.cjs", rule: "write", check: "filesystem", detail: /\/\.fixture-state .*outside the write roots/ },
  { file: "stderr.cjs", rule: "stderr", check: "stderr", detail: /wrote 19 bytes to stderr/ },
  { file: "no-manifest.cjs", rule: "manifest-missing", check: "manifest", detail: /printed nothing/ },
  { file: "invalid-manifest.cjs", rule: "manifest-invalid", check: "manifest", detail: /^resources\.cpu: / },
  {
    file: "hang.cjs",
    rule: "timeout",
    check: "time-limit",
    detail: /empty-input: still running after the 1000 ms limit/,
    timeoutMs: 1000,
  },
  { file: "spawn-shell.cjs", rule: "exec", check: "exec", detail: /exec of \/bin\/sh/ },
  // Beyond the list: file I/O through io_uring would be invisible to strace.
  { file: "io-uring.cjs", rule: "evasive-syscall", check: "syscalls", detail: /^io_uring_setup: / },
];

/** One default vetting per corpus file, read by every test about that file. */
const reports = new Map<string, Promise<VetReport>>();
function vetted(file: string, timeoutMs?: number): Promise<VetReport> {
  let report = reports.get(file);
  if (!report) {
    report = vetAgent(join(CORPUS, file), timeoutMs !== undefined ? { timeoutMs } : {});
    reports.set(file, report);
  }
  return report;
}

function expectRejectedFor(report: VetReport, c: { rule: string; check: string; detail: RegExp }): void {
  expect(report.couldNotVet).toBe(false);
  expect(report.ok).toBe(false);
  expect(rulesOf(report)).toEqual([c.rule]);
  const failed = report.checks.filter((x) => !x.ok);
  expect(failed.map((x) => x.name)).toEqual([c.check]);
  expect(failed[0]!.violations.some((v) => c.detail.test(v.detail))).toBe(true);
  expect(report.reasons.every((r) => r.startsWith(`${c.rule}: `))).toBe(true);
  expect(report.sha256).toMatch(/^[0-9a-f]{64}$/);
}

describe("the bad-agent corpus is rejected, each for its own reason", () => {
  for (const c of CORPUS_CASES) {
    it(`${c.file} → ${c.rule}`, async () => {
      const report = await vetted(c.file, c.timeoutMs);
      expectRejectedFor(report, c);
    });
  }

  it("cites the strace line as evidence for syscall rules", async () => {
    const report = await vetted("connect-inet.cjs");
    const v = report.checks.find((c) => c.name === "network")!.violations.find((x) => x.detail.startsWith("connect"))!;
    expect(v.evidence).toMatch(
      /^\d+\s+connect\(\d+<socket:\[\d+\]>, \{sa_family=AF_INET, sin_port=htons\(9\), sin_addr=inet_addr\("127\.0\.0\.1"\)\}/,
    );
  });

  it("reports the ~/.ssh/id_rsa attempt even though it failed (judged by what was tried)", async () => {
    const report = await vetted("read-secret.cjs");
    expect(report.reasons.some((r) => /\.ssh\/id_rsa \(failed: ENOENT, still an attempt\)/.test(r))).toBe(true);
  });

  describe("a compiled C agent linked against a stub libcuda.so.1", () => {
    const t = tempDir("aipv-");
    afterAll(() => t.cleanup());
    /** The agent that does not declare a GPU, built once for both tests. */
    let built: string | undefined;
    const undeclaredAgent = (): string => (built ??= buildGpuAgent(t.dir));

    it("is rejected for gpu-library, statically (NEEDED) and at run time (opened)", async () => {
      const exe = undeclaredAgent();
      const report = await vetAgent(exe);
      expectRejectedFor(report, {
        rule: "gpu-library",
        check: "libraries",
        detail: /links libcuda\.so\.1 .*does not declare resources\.gpu/,
      });
      expect(report.interpreter).toEqual([exe]);
      expect(report.libraries.find((l) => l.name === "libcuda.so.1")?.path).toBe(join(t.dir, "libcuda.so.1"));
      expect(report.reasons.some((r) => /opened GPU\/driver library libcuda\.so\.1 at run time/.test(r))).toBe(true);
    });

    it("is admitted only when the manifest declares a GPU and the policy allows GPU agents", async () => {
      const gpu = tempDir("aipv-");
      try {
        const exe = buildGpuAgent(gpu.dir, true);
        const denied = await vetAgent(exe);
        expect(rulesOf(denied)).toEqual(["gpu-library"]);
        expect(denied.reasons.some((r) => /the policy does not allow GPU agents/.test(r))).toBe(true);
        const allowed = await vetAgent(exe, { policy: { ...DEFAULT_POLICY, allow_gpu: true } });
        expect(allowed.reasons).toEqual([]);
        expect(allowed.ok).toBe(true);
        // allow_gpu alone does not admit an agent that does not declare one.
        const undeclared = await vetAgent(undeclaredAgent(), { policy: { ...DEFAULT_POLICY, allow_gpu: true } });
        expect(rulesOf(undeclared)).toEqual(["gpu-library"]);
      } finally {
        gpu.cleanup();
      }
    });
  });

  it("a node agent whose native addon links libcuda.so.1 is rejected through the addon it loaded", async () => {
    const dir = tempDir("aipva-");
    try {
      const exe = buildGpuAddonAgent(dir.dir);
      const report = await vetAgent(exe);
      expect(rulesOf(report)).toEqual(["gpu-library"]);
      expect(report.addons).toEqual([join(dir.dir, "gpu-addon.node")]);
      expect(report.reasons).toContain(
        `gpu-library: ${join(dir.dir, "gpu-addon.node")} links libcuda.so.1 (${join(dir.dir, "libcuda.so.1")}); the manifest does not declare resources.gpu`,
      );
    } finally {
      dir.cleanup();
    }
  });

  it("passes a well-behaved shell-script agent (#!/bin/sh resolved to its ELF)", async () => {
    const report = await vetAgent(join(CORPUS, "good-shell.sh"));
    expect(report.reasons).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.interpreter.slice(0, 2)).toEqual([join(CORPUS, "good-shell.sh"), "/bin/sh"]);
  });
});
