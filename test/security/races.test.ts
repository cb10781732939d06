/**
 * Finding 4 (docs/security.md): symlink swap races never read outside the workspace. A child process
 * swaps a file (and, separately, a directory) for a symlink to an outside secret in a tight loop while
 * each code agent and search answer 1,000 requests on it; no answer may contain the secret.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, renameSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIST, ndjsonSession, servedAgent, tempDir } from "../helpers.js";

const ATTEMPTS = 1000;
/** Requests in flight at once: within every agent's max_concurrent, so that each one is served. */
const BATCH = 4;
/** Each request's deadline (`constraints.timeout_ms`), far above any answer's time on a busy host. */
const SLOW_HOST_MS = 60_000;
const SECRET = "TOPSECRET_outside";
const INSIDE = "insideValue";
const source = (word: string): string =>
  `export function probe(${word}Param: number): number {\n  return ${word}Param + 1;\n}\nexport const ${word} = 1;\n`;

/**
 * Swap `target` between the real thing and a symlink to `outside`, as fast as it can, until killed;
 * resolves once it has swapped (a process start on a loaded host can take longer than 1,000 requests).
 */
async function swapper(kind: "file" | "dir", target: string, outside: string): Promise<ChildProcess> {
  const script = `
    const fs = require("node:fs");
    const [kind, target, outside, inside, parent] = process.argv.slice(1);
    const real = target + ".real", link = target + ".link";
    for (let swaps = 0; ; ) {
      // Never outlives the test process: a test stopped at its timeout may never reach its kill.
      if (swaps % 1000 === 0) try { process.kill(Number(parent), 0); } catch { process.exit(0); }
      try {
        fs.symlinkSync(outside, link);
        if (kind === "file") { fs.renameSync(link, target); fs.writeFileSync(real, inside); fs.renameSync(real, target); }
        else { fs.renameSync(target, real); fs.renameSync(link, target); fs.unlinkSync(target); fs.renameSync(real, target); }
        if (++swaps === 1) fs.writeSync(1, "swapping\\n");
      } catch { try { fs.unlinkSync(link); } catch {} }
    }`;
  const child = spawn(process.execPath, ["-e", script, kind, target, outside, source(INSIDE), String(process.pid)], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once("data", () => resolve());
    child.once("exit", (code, signal) => reject(new Error(`the swapper exited (${code ?? signal}) before swapping`)));
  });
  return child;
}

/**
 * Undo what a swapper killed mid-swap left: a symlink or nothing at `target` (the real thing set aside as
 * `.real`), a stray `.link`. The next test's swapper could not complete a swap on such a workspace.
 */
function restore(kind: "file" | "dir", target: string): void {
  rmSync(`${target}.link`, { force: true });
  if (lstatSync(target, { throwIfNoEntry: false })?.isSymbolicLink()) unlinkSync(target);
  if (existsSync(`${target}.real`)) {
    if (kind === "dir" && !existsSync(target)) renameSync(`${target}.real`, target);
    else rmSync(`${target}.real`, { recursive: true, force: true });
  }
  if (kind === "file" && !existsSync(target)) writeFileSync(target, source(INSIDE));
}

type Req = (root: string, file: string) => Record<string, unknown>;
const AGENTS: { name: string; exe: string; request: Req }[] = [
  {
    name: "summarize",
    exe: "agents/summarize/main.js",
    request: (root, file) => ({
      action: "summarize",
      context: { workspace_root: root, file_path: file },
      constraints: {},
    }),
  },
  {
    name: "testgen",
    exe: "agents/testgen/main.js",
    request: (root, file) => ({
      action: "testgen",
      context: { workspace_root: root, file_path: file },
      constraints: { function: "probe" },
    }),
  },
  {
    name: "complete-lite",
    exe: "agents/complete-lite/main.js",
    request: (root, file) => ({
      action: "complete",
      context: { workspace_root: root, file_path: file },
      constraints: {},
    }),
  },
  {
    name: "search",
    exe: "agents/search/main.js",
    request: (root) => ({
      action: "search",
      context: { workspace_root: root, query: `${INSIDE} probe` },
      constraints: { refresh_ms: 0 },
    }),
  },
];

describe("symlink swap races", () => {
  const t = tempDir("aiprace-");
  const outside = join(t.dir, "outside");
  const ws = join(t.dir, "ws");
  beforeAll(() => {
    mkdirSync(join(outside, "dir"), { recursive: true });
    mkdirSync(join(ws, "src"), { recursive: true });
    writeFileSync(join(outside, "secret.ts"), source(SECRET));
    writeFileSync(join(outside, "dir/a.ts"), source(SECRET));
    writeFileSync(join(ws, "a.ts"), source(INSIDE));
    writeFileSync(join(ws, "src/a.ts"), source(INSIDE));
  });
  afterAll(() => t.cleanup());

  for (const agent of AGENTS) {
    const served = servedAgent(join(DIST, agent.exe));
    it(`${agent.name}: ${ATTEMPTS} requests during file and directory swaps, no answer holds outside content`, async ({
      signal,
    }) => {
      const session = await ndjsonSession(served.socket);
      const stats = { leaked: 0, inside: 0, refused: 0 };
      const refusals = new Map<string, number>();
      for (const [kind, target, file, out] of [
        ["file", join(ws, "a.ts"), "a.ts", join(outside, "secret.ts")],
        ["dir", join(ws, "src"), "src/a.ts", join(outside, "dir")],
      ] as const) {
        // A test that ran out of time stops here: its swapper would spin on in the tests after it.
        if (signal.aborted) break;
        const child = await swapper(kind, target, out);
        try {
          for (let sent = 0; sent < ATTEMPTS / 2 && !signal.aborted; sent += BATCH) {
            const answers = await Promise.all(
              Array.from({ length: BATCH }, (_, i) => {
                const req = agent.request(ws, file);
                // The test is about what an answer holds, not how fast it comes: on a loaded host the
                // agents' default deadlines would turn some answers into timeouts, which prove nothing.
                const constraints = { ...(req.constraints as object), timeout_ms: SLOW_HOST_MS };
                return session.send({ ...req, constraints, trace_id: `${agent.name}-${kind}-${sent + i}` });
              }),
            );
            for (const a of answers) {
              const text = JSON.stringify(a);
              if (text.includes(SECRET)) stats.leaked++;
              else if (text.includes(INSIDE)) stats.inside++;
              else {
                stats.refused++;
                const why = String(a.error?.type ?? "success without the file's content");
                refusals.set(why, (refusals.get(why) ?? 0) + 1);
              }
            }
          }
        } finally {
          child.kill("SIGKILL");
          await new Promise((r) => child.once("exit", r));
          restore(kind, target);
        }
      }
      session.close();
      console.log(`${agent.name}: ${JSON.stringify(stats)} ${JSON.stringify([...refusals])}`);
      expect(stats.leaked).toBe(0);
      // Never a 5xx or a shed request: every refusal is a clear 4xx (FORBIDDEN_PATH, INVALID_FIELD).
      expect(
        [...refusals.keys()].filter(
          (k) => !["AIP_ERR_FORBIDDEN_PATH", "AIP_ERR_INVALID_FIELD", "success without the file's content"].includes(k),
        ),
      ).toEqual([]);
      // Every request was answered. The attack was real: a file agent met the symlink and refused it;
      // search's walk skips links (they are never opened) and kept answering from the inside file.
      expect(stats.inside + stats.refused).toBe(ATTEMPTS);
      if (agent.name === "search") expect(stats.inside).toBeGreaterThan(0);
      else expect(refusals.get("AIP_ERR_FORBIDDEN_PATH") ?? 0).toBeGreaterThan(0);
    }, 180_000);
  }
});
