#!/usr/bin/env node
/** `npm run conformance -- PATH_TO_EXECUTABLE`: the AIP-1 conformance battery against any agent. */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "../tools/aip/command.js";
import { CHECKS, DEFAULT_SAMPLE, runConformance, type Sample } from "../tools/conformance/kit.js";

const USAGE = `Usage: npm run conformance -- PATH_TO_AGENT_EXECUTABLE [--request GOOD_REQUEST.json] [--only TEXT]

Runs the AIP-1 conformance battery (one-shot, HTTP and NDJSON over a Unix socket,
limits, lifecycle) against an agent and names each failed check and why.
--request: a request the agent answers with success (its context and constraints
are used; default: {"context":{"source_code":"const a = 1;\\n"},"constraints":{}}).
--only: run just the checks whose name contains TEXT (case-insensitive), e.g.
"good request" while fixing one check.
Requests for the bundled agents: manifests/requests/<agent>.json.
Exit status: 0 when every check passes, 1 otherwise, 2 on a usage error.`;

function usageError(message: string): never {
  console.error(`conformance: ${message}\n\n${USAGE}`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs(process.argv.slice(2), ["request", "only"], ["help"]);
} catch (err) {
  usageError((err as Error).message);
}
if (parsed.flags.help) {
  console.log(USAGE);
  process.exit(0);
}
const [target, ...extra] = parsed.positionals;
if (target === undefined || extra.length > 0) usageError("expected exactly one agent executable");
let sample: Sample = DEFAULT_SAMPLE;
const requestFile = parsed.flags.request;
if (typeof requestFile === "string") {
  let req: Partial<Sample>;
  try {
    req = JSON.parse(readFileSync(requestFile, "utf8")) as Partial<Sample>;
  } catch (err) {
    usageError(`cannot read --request ${requestFile}: ${(err as Error).message}`);
  }
  const context = req.context ?? {};
  // A relative workspace_root in the file is the current directory's (requests themselves need absolute roots).
  if (typeof context.workspace_root === "string") context.workspace_root = resolve(context.workspace_root);
  sample = { context, constraints: req.constraints ?? {} };
}
const only = typeof parsed.flags.only === "string" ? parsed.flags.only : undefined;
if (only !== undefined && !CHECKS.some((c) => c.name.toLowerCase().includes(only.toLowerCase())))
  usageError(`no check's name contains "${only}"`);
const exe = resolve(target);
const results = await runConformance(
  exe,
  (r) => {
    console.log(
      `${r.ok ? "PASS" : "FAIL"}  ${r.name}${r.ok ? ` (${r.ms.toFixed(0)} ms)` : `\n      ${r.reason ?? ""}`}`,
    );
  },
  sample,
  only,
);
const failed = results.filter((r) => !r.ok).length;
console.log(`\n${results.length - failed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
