/**
 * The harness of the docs suites (test/e2e/docs*.test.ts): every fenced example in README.md and
 * docs/*.md, the table saying how each one is verified, and the shell they run in. "here" in that table
 * means one of the docs suites runs the block.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { ROOT } from "../../helpers.js";
import { AIP } from "../../reliability/lib/agency.js";

const exec = promisify(execFile);

export interface Block {
  file: string;
  line: number;
  lang: string;
  body: string;
}

let read: Block[] | undefined;

/** Every fenced block of README.md and docs/*.md (read once). */
export function blocks(): Block[] {
  if (read) return read;
  const files = ["README.md", ...readdirSync(join(ROOT, "docs")).map((f) => `docs/${f}`)].filter((f) =>
    f.endsWith(".md"),
  );
  const out: Block[] = [];
  for (const file of files) {
    const lines = readFileSync(join(ROOT, file), "utf8").split("\n");
    for (let i = 0; i < lines.length; i++) {
      const open = /^```(\w*)\s*$/.exec(lines[i]!);
      if (!open) continue;
      const end = lines.findIndex((l, j) => j > i && l.startsWith("```"));
      out.push({ file, line: i + 1, lang: open[1]!, body: lines.slice(i + 1, end).join("\n") + "\n" });
      i = end;
    }
  }
  read = out;
  return out;
}

/** The block of `file` whose body starts with `start`. */
export function block(file: string, start: string): string {
  const b = blocks().filter((x) => x.file === file && x.body.startsWith(start));
  if (b.length !== 1) throw new Error(`${file}: ${b.length} blocks start with ${JSON.stringify(start)}`);
  return b[0]!.body;
}

/**
 * How each block is verified: "here" (a docs suite runs it), a test file that runs it, or why it cannot
 * run on this machine (and what is checked instead, here).
 */
export const EXAMPLES: { file: string; start: string; how: string }[] = [
  {
    file: "README.md",
    start: "npm ci && npm start",
    how: "here: npm start; npm ci and npm test are what .ci/run runs",
  },
  { file: "README.md", start: "curl -s --unix-socket ./run/aip.sock", how: "test/e2e/readme.test.ts" },
  { file: "README.md", start: 'echo \'{"action":"echo"', how: "test/e2e/readme.test.ts" },
  { file: "docs/aip-1.md", start: "curl --unix-socket ./run/aip.sock", how: "here" },
  { file: "docs/aip-1.md", start: "npm run conformance -- path/to/your-agent", how: "here" },
  {
    file: "docs/agents.md",
    start: "npm run conformance -- dist/agents/search",
    how: "here, limited with --only to the good-request checks (the whole battery with these requests: test/agents/search/main.test.ts, test/agents/testgen/main.test.ts)",
  },
  {
    file: "docs/agents.md",
    start: 'curl --unix-socket ./run/aip.sock http://aip/v1/invoke -d \'{"action":"summarize"',
    how: "here",
  },
  {
    file: "docs/agents.md",
    start: 'curl --unix-socket ./run/aip.sock http://aip/v1/invoke -d \'{"action":"testgen"',
    how: "here",
  },
  { file: "docs/agents.md", start: '"tests": {', how: "here: the keys of a real testgen answer" },
  {
    file: "docs/agents.md",
    start: 'curl --unix-socket ./run/aip.sock http://aip/v1/invoke -d \'{"action":"complete"',
    how: "here",
  },
  { file: "docs/agents.md", start: "AIP_MODEL=", how: "here, with the tiny test model" },
  { file: "docs/integrations.md", start: "local aip_client", how: "test/tools/aip/lsp.nvim.test.ts" },
  { file: "docs/integrations.md", start: '{ "command": "aip"', how: "test/e2e/integrations.test.ts" },
  { file: "docs/integrations.md", start: "[language-server.aip]", how: "test/e2e/integrations.test.ts" },
  { file: "docs/integrations.md", start: '{\n  "glspc.server.command"', how: "test/e2e/integrations.test.ts" },
  { file: "docs/integrations.md", start: "(with-eval-after-load 'eglot", how: "test/e2e/integrations.test.ts" },
  { file: "docs/integrations.md", start: '{\n  "mcpServers"', how: "test/e2e/integrations.test.ts" },
  { file: "docs/operations.md", start: "aip canary start", how: "here" },
  { file: "docs/operations.md", start: "aip health ", how: "here" },
  {
    file: "docs/operations.md",
    start: '{\n  "agents": [\n    {\n      "name": "complete"',
    how: "test/orchestrator/model-engine.test.ts parses it with parseConfig",
  },
  { file: "docs/operations.md", start: "# failed requests", how: "here, on the log of `aip up --log`" },
  { file: "docs/operations.md", start: "node dist/scripts/aip.js vet", how: "here" },
  {
    file: "docs/operations.md",
    start: "for a in dist/agents/*/main.js",
    how: "here: the vet loop, --dry-run and DESTDIR run as written; the installs that change the host run with --dry-run; usermod needs the installed group",
  },
  {
    file: "docs/operations.md",
    start: "systemctl status",
    how: "systemd is not PID 1 here: the aip and curl lines run against this test's agency; systemctl is not run",
  },
  {
    file: "docs/operations.md",
    start: "journalctl",
    how: "no journal here: each jq filter runs on journal entries made from this test's agency log",
  },
  {
    file: "docs/operations.md",
    start: "sudo systemctl disable",
    how: "it would change the host: every file it removes is checked to be one install-systemd installs (DESTDIR)",
  },
  {
    file: "docs/operations.md",
    start: "docker build",
    how: "no container registry is reachable here: the Dockerfile and the kustomization are checked by test/deploy/kubernetes.test.ts",
  },
  {
    file: "docs/operations.md",
    start: "sudo tools/container/build-local-base.sh",
    how: "needs root, podman and debootstrap (minutes; run by hand, figures in the docs): test/deploy/kubernetes.test.ts checks the script's syntax and that it stands in for the Dockerfile's base",
  },
  {
    file: "docs/reliability.md",
    start: "npm run test:reliability",
    how: "here: both scripts exist (running them from a test would run the test suite inside itself)",
  },
  {
    file: "docs/performance.md",
    start: "npm run bench ",
    how: "here, with --dry-run (benchmarks are not run by tests)",
  },
  { file: "docs/performance.md", start: "apt-get install -y nginx haproxy", how: "here, with --dry-run" },
  { file: "docs/performance.md", start: "AIP_HOSTILE_ABUSES", how: "here, with --dry-run and the abuse names" },
  {
    file: "docs/performance.md",
    start: "cp -a dist /tmp/base/dist",
    how: "here, the bench line with --dry-run and the abuse names (the copy, a baseline build, is not made)",
  },
];

/** A directory holding `aip`: this checkout's CLI, for the examples that call it by that name. */
const BIN = join(ROOT, "node_modules/.cache/agency/docs-bin");
if (!existsSync(join(BIN, "aip"))) {
  // The docs suites run side by side: each writes its own copy and renames it into place, so that none
  // runs a half-written script.
  mkdirSync(BIN, { recursive: true });
  const tmp = join(BIN, `aip.${process.pid}`);
  writeFileSync(tmp, `#!/bin/sh\nexec "${process.execPath}" "${AIP}" "$@"\n`, { mode: 0o755 });
  renameSync(tmp, join(BIN, "aip"));
}

/** Run a shell script (bash, -euo pipefail) with `aip` on PATH as this checkout's CLI. */
export async function sh(script: string, env: Record<string, string> = {}, timeout = 60_000): Promise<string> {
  const { stdout } = await exec("bash", ["-euo", "pipefail", "-c", script], {
    cwd: ROOT,
    encoding: "utf8",
    timeout,
    maxBuffer: 16 << 20,
    env: { ...process.env, PATH: `${BIN}:${process.env.PATH}`, ...env },
  });
  return stdout;
}

/** `sh` kept by command: two lines that become the same command here run it once, and share its output. */
export function shOnce(): (script: string, timeout?: number) => Promise<string> {
  const runs = new Map<string, Promise<string>>();
  return (script, timeout) => {
    const out = runs.get(script) ?? sh(script, {}, timeout);
    runs.set(script, out);
    return out;
  };
}

/** `sudo` dropped when the test already runs as root (CI), and the line skipped otherwise. */
export const asRoot = (line: string): string | undefined =>
  process.getuid?.() === 0 ? line.replace(/^sudo /, "") : line.startsWith("sudo ") ? undefined : line;

/** The command lines of a block: comments and blank lines dropped, continuations joined. */
export const commands = (body: string): string[] =>
  body
    .replace(/\\\n\s*/g, "")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));

/**
 * Wait for every one of `work` (commands run side by side), then fail with the first failure: none is
 * left running when the caller cleans up after a failure.
 */
export async function allOf<T extends readonly unknown[]>(
  work: readonly [...T],
): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const settled = await Promise.allSettled(work);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as {
    -readonly [K in keyof T]: Awaited<T[K]>;
  };
}

/**
 * Run `jobs` at most `limit` at a time (the suite's other worker shares the two cores), then, as allOf
 * does, fail with the first failure once none is running.
 */
export async function inTurns<T>(jobs: readonly (() => Promise<T>)[], limit = 3): Promise<T[]> {
  const started: Promise<T>[] = [];
  const lane = async (): Promise<void> => {
    while (started.length < jobs.length) {
      const job = jobs[started.length]!();
      started.push(job);
      await job.catch(() => undefined);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, lane));
  return allOf(started);
}
