#!/usr/bin/env node
/**
 * Search query speed against a previous build, side by side in one process (docs/agents.md "search"):
 * `node dist/bench/search-speed.js <old-dist> [--root <dir>] [--tag <name>]` where `<old-dist>` is the
 * `dist/` of the commit to compare with (built from `git archive <commit>`). Both indexes cover the same
 * workspace: a generated 5,000-file one, or `--root` (this repository: `--root .`); the queries alternate
 * old/new so that load on the host hits both alike. Prints p50/p95 per side and the new/old ratios, and
 * writes bench/results/<date>-search-speed[-<tag>].json.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { runQuery } from "../agents/search/query.js";
import { IndexRegistry } from "../agents/search/registry.js";
import { generateWorkspace } from "./generate.js";
import { SEARCH_QUERIES } from "./lib/search-queries.js";
import { percentileOf } from "../protocol/util/percentile.js";
import { summarize, time, timeAsync } from "./stats.js";
import { parseArgs } from "../tools/aip/command.js";

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), "../..");

interface SearchModules {
  IndexRegistry: typeof IndexRegistry;
  runQuery: typeof runQuery;
}

/** The benchmark's queries: identifiers, words, and the phrasings a developer types (synonyms widen these). */
const QUERIES = [
  ...SEARCH_QUERIES,
  "remove the item from the queue",
  "create a bounded queue with a capacity",
  "compute the weighted score of values",
  "check whether the limit is reached",
];

/** With `--root`, also queries about this repository (none of them an evaluation query): phrasings, identifiers, a yes/no question. */
const REPO_QUERIES = [
  "line and column of an offset",
  "check that a path stays inside the workspace root",
  "decode one request and answer it",
  "is the agent healthy",
  "start the agents together",
  "AIP_ERR_PARSE",
  "adaptivePoolGrow",
  "export list of a module with overloads",
];

const args = parseArgs(process.argv.slice(2), ["root", "tag"]);
const oldDist = args.positionals[0];
if (!oldDist) {
  console.error("usage: node dist/bench/search-speed.js <old-dist> [--root <dir>] [--tag <name>]");
  process.exit(2);
}
const rootArg = typeof args.flags.root === "string" ? resolve(args.flags.root) : undefined;
const tag = typeof args.flags.tag === "string" ? `-${args.flags.tag}` : "";
const queries = rootArg ? [...QUERIES, ...REPO_QUERIES] : QUERIES;
const load = async (dist: string): Promise<SearchModules> => ({
  IndexRegistry: ((await import(pathToFileURL(join(dist, "agents/search/registry.js")).href)) as SearchModules)
    .IndexRegistry,
  runQuery: ((await import(pathToFileURL(join(dist, "agents/search/query.js")).href)) as SearchModules).runQuery,
});
const old = await load(resolve(oldDist));
const dir = rootArg ?? mkdtempSync(join(tmpdir(), "aipbench-"));
try {
  if (!rootArg)
    for (const [rel, text] of generateWorkspace(5000)) {
      mkdirSync(join(dir, dirname(rel)), { recursive: true });
      writeFileSync(join(dir, rel), text);
    }
  const oldRegistry = new old.IndexRegistry();
  const newRegistry = new IndexRegistry();
  const oldBuild = await timeAsync(() => oldRegistry.get(dir, 60_000));
  const newBuild = await timeAsync(() => newRegistry.get(dir, 60_000));
  const oldIndex = (await oldRegistry.get(dir, 60_000)).index;
  const newIndex = (await newRegistry.get(dir, 60_000)).index;
  for (const q of queries) {
    old.runQuery(oldIndex, q, { limit: 10 });
    runQuery(newIndex, q, { limit: 10 });
  }
  const before: number[] = [];
  const after: number[] = [];
  // CPU time of this process per query (user + system, µs → ms): unlike wall time, not inflated when the
  // host preempts the process, which sets the wall-clock p95 of such short queries on a shared machine.
  const cpuBefore: number[] = [];
  const cpuAfter: number[] = [];
  const cpu = (fn: () => void): number => {
    const c = process.cpuUsage();
    fn();
    const d = process.cpuUsage(c);
    return (d.user + d.system) / 1000;
  };
  for (let r = 0; r < 30; r++)
    for (const q of queries) {
      before.push(time(() => old.runQuery(oldIndex, q, { limit: 10 })));
      after.push(time(() => runQuery(newIndex, q, { limit: 10 })));
      // Which side goes first alternates by round, so that what the other side left behind hits both alike.
      if (r % 2 === 0) {
        cpuBefore.push(cpu(() => old.runQuery(oldIndex, q, { limit: 10 })));
        cpuAfter.push(cpu(() => runQuery(newIndex, q, { limit: 10 })));
      } else {
        cpuAfter.push(cpu(() => runQuery(newIndex, q, { limit: 10 })));
        cpuBefore.push(cpu(() => old.runQuery(oldIndex, q, { limit: 10 })));
      }
    }
  const ratio = (p: number): number => Math.round((percentileOf(after, p) / percentileOf(before, p)) * 100) / 100;
  const sum = (a: number[]): number => a.reduce((x, y) => x + y, 0);
  const results = {
    date: new Date().toISOString(),
    command: `node dist/bench/search-speed.js ${process.argv.slice(2).join(" ")} (old-dist: git archive <commit> | tar -x, npx tsc -p tsconfig.build.json)`,
    workspace: rootArg ?? "generated, 5,000 files",
    old_dist: oldDist,
    old_commit: process.env.OLD_COMMIT ?? null,
    files: newIndex.fileCount,
    chunks: { old: oldIndex.docs.size, new: newIndex.docs.size },
    index_build_ms: { old: Math.round(oldBuild), new: Math.round(newBuild) },
    queries: queries.length,
    query_ms: { old: summarize(before), new: summarize(after) },
    ratio_new_over_old: { p50: ratio(50), p95: ratio(95) },
    load_average: loadavg().map((l) => Math.round(l * 100) / 100),
    cpu_ms_total: { old: Math.round(sum(cpuBefore)), new: Math.round(sum(cpuAfter)) },
    cpu_ratio_new_over_old: Math.round((sum(cpuAfter) / sum(cpuBefore)) * 100) / 100,
  };
  const out = join(ROOT, "bench/results", `${results.date.slice(0, 10)}-search-speed${tag}.json`);
  writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  console.log(JSON.stringify(results, null, 2));
} finally {
  if (!rootArg) rmSync(dir, { recursive: true, force: true });
}
