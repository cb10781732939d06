#!/usr/bin/env node
/** `npm run conformance -- PATH_TO_EXECUTABLE`: the AIP-1 conformance battery against any agent. */
import { resolve } from "node:path";
import { runConformance } from "./conformance/kit.js";

const args = process.argv.slice(2);
if (args.length !== 1 || args[0] === "--help" || args[0] === "-h") {
  console.log(`Usage: npm run conformance -- PATH_TO_AGENT_EXECUTABLE

Runs the AIP-1 conformance battery (one-shot, HTTP and NDJSON over a Unix socket,
limits, lifecycle) against an agent and names each failed check and why.
Exit status: 0 when every check passes, 1 otherwise, 2 on a usage error.`);
  process.exit(args.length === 1 ? 0 : 2);
}
const exe = resolve(args[0]!);
const results = await runConformance(exe, (r) => {
  console.log(`${r.ok ? "PASS" : "FAIL"}  ${r.name}${r.ok ? ` (${r.ms.toFixed(0)} ms)` : `\n      ${r.reason ?? ""}`}`);
});
const failed = results.filter((r) => !r.ok).length;
console.log(`\n${results.length - failed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
