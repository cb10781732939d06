/**
 * Which test files may share a vitest worker (vitest.config.ts's "unit-shared" project, `isolate: false`)
 * instead of each getting a fresh one. A fresh worker per file costs a process start and a new import of
 * every module the file reaches; files that only compute in this process can skip both. A file shares a
 * worker only when nothing it does can outlive it or depend on what ran before it in the same process:
 * its source shows none of the marks below, and it imports no test module but the two shared helpers
 * (whose process-starting exports are among the marks). Everything else stays isolated.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");

/** What makes a file keep its own worker, each with the reason a shared worker would suffer from it. */
export const ISOLATING: readonly { mark: RegExp; why: string }[] = [
  { mark: /\bvi\.(mock|doMock|unmock|stubEnv|stubGlobal|spyOn|useFakeTimers|setSystemTime)\b/, why: "mocks or fakes" },
  {
    mark: /process\.env(\.\w+|\[[^\]]*\])\s*=[^=]|delete\s+process\.env|Object\.assign\(\s*process\.env|\bwithEnv\(/,
    why: "changes the environment",
  },
  {
    mark: /process\.(chdir|umask|on|once|exit|kill|setMaxListeners)\(|globalThis\.\w+\s*=[^=]|Object\.defineProperty\(\s*globalThis/,
    why: "changes the process",
  },
  {
    mark: /process\.(cpuUsage|memoryUsage|resourceUsage)|\/proc\/self|getActiveResources/,
    why: "measures the process",
  },
  {
    mark: /\b(spawn|spawnSync|execFile|execFileSync|execSync|execa|fork|setInterval|createServer|createConnection|Worker)\b|\.listen\(|\bconnect\(|\bAipServer\b/,
    why: "starts processes, threads, timers or sockets",
  },
  {
    mark: /\b(serve|servedAgent|startAgent|startAgency|oneShot|runOnce|ndjsonSession|hasBwrap|DIST|DUMMY)\b|dist\/|conformance\.js|harness\.js/,
    why: "runs agents through the suite's helpers",
  },
  { mark: /\b(bwrap|python3|pytest|nvim|llama|gguf)\b/, why: "runs an external tool or a model" },
];

/** Test modules a shared file may import: their process-starting exports are marks above. */
const SHARED_HELPERS = new Set(["test/helpers.ts", "test/agents/code-helpers.ts"]);

/**
 * Files that show no mark but assert on a module's first-use state (a loader not yet run, a cache still
 * empty), which a file before them in the same worker would have changed.
 */
export const FIRST_USE: readonly string[] = ["test/agents/complete/warm-start.test.ts"];

/**
 * Why `file` (repository-relative) must keep its own worker, given its `source`; undefined if it may share.
 * A test module it imports (other than the shared helpers) is held to the same marks.
 */
export function isolationReason(file: string, source: string, seen = new Set<string>()): string | undefined {
  if (file.startsWith("test/reliability/")) return "a reliability run loads both cores";
  if (FIRST_USE.includes(file)) return "asserts on a module's first-use state";
  for (const { mark, why } of ISOLATING) {
    const hit = mark.exec(source);
    if (hit) return `${why}: ${hit[0].trim()}`;
  }
  seen.add(file);
  // Import statements: a line that starts one.
  for (const m of source.matchAll(/^(?:import|export|\})[^"\n]*\sfrom\s+"(\.[^"]+)"|^import\s+"(\.[^"]+)"/gm)) {
    const target = relative(ROOT, resolve(ROOT, dirname(file), m[1] ?? m[2]!)).replace(/\.js$/, ".ts");
    if (!target.startsWith("test/") || SHARED_HELPERS.has(target) || seen.has(target)) continue;
    // A line of quoted code that names no file of the suite is a fixture, not an import.
    if (!existsSync(join(ROOT, target))) continue;
    const why = isolationReason(target, readFileSync(join(ROOT, target), "utf8"), seen);
    if (why) return `imports ${target}, which ${why}`;
  }
  return undefined;
}

/** Every test file under test/, repository-relative, sorted. */
export function testFiles(dir = join(ROOT, "test")): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== "fixtures" && entry.name !== "node_modules") out.push(...testFiles(path));
    else if (entry.isFile() && entry.name.endsWith(".test.ts")) out.push(relative(ROOT, path));
  }
  return out.sort();
}

/** The test files that may share a worker. */
export function sharedWorkerFiles(): string[] {
  return testFiles().filter((f) => isolationReason(f, readFileSync(join(ROOT, f), "utf8")) === undefined);
}
