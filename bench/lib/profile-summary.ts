#!/usr/bin/env node
/**
 * `node dist/bench/lib/profile-summary.js FILE.cpuprofile [TOP]`: the functions with the most self time in
 * a V8 CPU profile (`node --cpu-prof`), as a markdown table: share of samples, function, file:line.
 */
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

const [file, topArg = "30"] = process.argv.slice(2);
if (!file) {
  console.error("usage: profile-summary FILE.cpuprofile [TOP]");
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, "utf8")) as { nodes: ProfileNode[]; samples: number[] };
const hits = new Map<number, number>();
for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
const byFrame = new Map<string, number>();
for (const n of profile.nodes) {
  const f = n.callFrame;
  const where = f.url ? `${f.url.replace(/^file:\/\/.*?\/(dist|node_modules)\//, "$1/")}:${f.lineNumber + 1}` : "";
  const key = `${f.functionName || "(anonymous)"}\t${where}`;
  byFrame.set(key, (byFrame.get(key) ?? 0) + (hits.get(n.id) ?? 0));
}
const total = profile.samples.length;
const idle = [...byFrame].filter(([k]) => k.startsWith("(idle)")).reduce((s, [, v]) => s + v, 0);
const rows = [...byFrame]
  .filter(([k]) => !k.startsWith("(idle)"))
  .sort((a, b) => b[1] - a[1])
  .slice(0, Number(topArg));
console.log(`${total} samples, ${Math.round((100 * idle) / total)}% idle; self time as a share of busy samples:\n`);
console.log("| self % | function | where |\n|---:|---|---|");
for (const [k, v] of rows) {
  const [fn, where] = k.split("\t");
  console.log(`| ${((100 * v) / (total - idle)).toFixed(1)} | ${fn} | ${where} |`);
}
