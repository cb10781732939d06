import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../../../helpers.js";

export const CORPUS = join(ROOT, "test/fixtures/vet");

/** Build the C fixture and its stub libcuda.so.1 into `dir` with gcc; returns the executable. */
export function buildGpuAgent(dir: string, declareGpu = false): string {
  const lib = join(dir, "libcuda.so.1");
  const exe = join(dir, "gpu-agent");
  execFileSync("gcc", ["-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o", lib, join(CORPUS, "libcuda-stub.c")]);
  execFileSync("gcc", [
    ...(declareGpu ? ["-DDECLARE_GPU"] : []),
    "-o",
    exe,
    join(CORPUS, "gpu-agent.c"),
    `-L${dir}`,
    "-l:libcuda.so.1",
    "-Wl,-rpath,$ORIGIN",
  ]);
  return exe;
}

/** A node agent (gpu-addon.cjs) with a native addon linking a stub libcuda.so.1, built in `dir`; returns the script. */
export function buildGpuAddonAgent(dir: string): string {
  const lib = join(dir, "libcuda.so.1");
  execFileSync("gcc", ["-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o", lib, join(CORPUS, "libcuda-stub.c")]);
  execFileSync("gcc", [
    "-shared",
    "-fPIC",
    "-o",
    join(dir, "gpu-addon.node"),
    join(CORPUS, "gpu-addon.c"),
    `-L${dir}`,
    "-l:libcuda.so.1",
    "-Wl,-rpath,$ORIGIN",
  ]);
  for (const f of ["gpu-addon.cjs", "_agent.cjs"]) copyFileSync(join(CORPUS, f), join(dir, f));
  chmodSync(join(dir, "gpu-addon.cjs"), 0o755);
  return join(dir, "gpu-addon.cjs");
}

/** The distinct rules a report's violations name. */
export function rulesOf(report: { checks: { violations: { rule: string }[] }[] }): string[] {
  return [...new Set(report.checks.flatMap((c) => c.violations.map((v) => v.rule)))].sort();
}
