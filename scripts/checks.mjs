#!/usr/bin/env node
/* global process, console, Buffer, performance */
/**
 * The checks `npm test` runs before the tests (build, typecheck, lint, prettier), side by side. Each is
 * one process that keeps one core busy and none reads another's output, so with two cores they end
 * about when the longest does instead of after their sum. At most one check per core runs at a time,
 * the longest first. A check's output is printed whole when it ends, so that lines of two checks never
 * interleave; the exit status is 1 when any check failed, after all of them ended.
 *
 *   node scripts/checks.mjs lint typecheck format:check build   (npm script names, longest first)
 */
import { spawn } from "node:child_process";
import { availableParallelism } from "node:os";

const names = process.argv.slice(2);
if (names.length === 0) {
  console.error("usage: node scripts/checks.mjs SCRIPT...   (npm script names, longest first)");
  process.exit(2);
}
const npm = process.env.npm_execpath;

/** Run `npm run NAME`; resolves with its exit status once it ended and its output was printed. */
function run(name) {
  const started = performance.now();
  // Under npm, its own CLI runs the script; called directly, the npm on PATH does.
  const [cmd, args] = npm ? [process.execPath, [npm, "run", "-s", name]] : ["npm", ["run", "-s", name]];
  const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
  const out = [];
  child.stdout.on("data", (d) => out.push(d));
  child.stderr.on("data", (d) => out.push(d));
  return new Promise((resolve) => {
    const done = (code, why) => {
      const secs = ((performance.now() - started) / 1000).toFixed(1);
      const text = Buffer.concat(out).toString();
      console.log(
        `> ${name}: ${code === 0 ? "ok" : `FAILED (${why})`} in ${secs} s${text.trim() ? "\n" + text.trimEnd() : ""}`,
      );
      resolve(code);
    };
    child.on("error", (err) => done(1, err.message));
    child.on("close", (code, signal) => done(code ?? 1, signal ?? `exit ${code}`));
  });
}

const queue = [...names];
const failed = [];
const worker = async () => {
  for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
    if ((await run(name)) !== 0) failed.push(name);
  }
};
await Promise.all(Array.from({ length: Math.min(availableParallelism(), names.length) }, worker));
if (failed.length > 0) {
  console.error(`checks failed: ${failed.join(", ")}`);
  process.exit(1);
}
