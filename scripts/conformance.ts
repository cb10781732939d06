#!/usr/bin/env node
/** `npm run conformance -- PATH_TO_EXECUTABLE`: the AIP-1 conformance battery against any agent. */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { DEFAULT_SAMPLE, runConformance, type Sample } from "./conformance/kit.js";

const args = process.argv.slice(2);
const reqIdx = args.indexOf("--request");
const requestFile = reqIdx >= 0 ? args[reqIdx + 1] : undefined;
if (reqIdx >= 0) args.splice(reqIdx, 2);
if (args.length !== 1 || args[0] === "--help" || args[0] === "-h" || (reqIdx >= 0 && !requestFile)) {
  console.log(`Usage: npm run conformance -- PATH_TO_AGENT_EXECUTABLE [--request GOOD_REQUEST.json]

Runs the AIP-1 conformance battery (one-shot, HTTP and NDJSON over a Unix socket,
limits, lifecycle) against an agent and names each failed check and why.
--request: a request the agent answers with success (its context and constraints
are used; default: {"context":{"source_code":"const a = 1;\\n"},"constraints":{}}).
Exit status: 0 when every check passes, 1 otherwise, 2 on a usage error.`);
  process.exit(args.length === 1 && reqIdx < 0 ? 0 : 2);
}
let sample: Sample = DEFAULT_SAMPLE;
if (requestFile) {
  const req = JSON.parse(readFileSync(requestFile, "utf8")) as Partial<Sample>;
  sample = { context: req.context ?? {}, constraints: req.constraints ?? {} };
}
const exe = resolve(args[0]!);
const results = await runConformance(
  exe,
  (r) => {
    console.log(
      `${r.ok ? "PASS" : "FAIL"}  ${r.name}${r.ok ? ` (${r.ms.toFixed(0)} ms)` : `\n      ${r.reason ?? ""}`}`,
    );
  },
  sample,
);
const failed = results.filter((r) => !r.ok).length;
console.log(`\n${results.length - failed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
