/** `aip vet PATH [--json]`: sandbox-vet an agent executable (static links, behaviour under strace, manifest). */
import { DEFAULT_TIMEOUT_MS, formatReport, loadPolicy, vetAgent } from "../../orchestrator/lifecycle/vet/index.js";
import { UsageError, parseArgs, type Command } from "./command.js";

/** Exit statuses of `aip vet` (2 doubles as the usage-error status shared by every subcommand). */
export const VET_EXIT = { pass: 0, fail: 1, couldNotVet: 2 } as const;

export const vet: Command = {
  usage: `Usage: aip vet PATH [--json] [--policy FILE] [--timeout-ms N]

Checks an agent executable the way the orchestrator does before registering it:
  static     ELF NEEDED libraries (readelf), #! interpreter resolved to its ELF, native addons;
             GPU/driver libraries only when the manifest declares a GPU and the policy allows it
  dynamic    two runs under strace -f (empty stdin; --manifest) with a scratch HOME and TMPDIR:
             no IP sockets, Unix sockets only in allowed directories, writes only under the write
             roots, no sensitive reads, no exec but its own interpreter, nothing on stderr,
             within the time limit, empty input answered with AIP_ERR_INVALID_JSON
  manifest   --manifest prints a valid AGENT_MANIFEST.json

  --json          print the report as JSON instead of a table
  --policy FILE   the vetting policy (default: manifests/vet-policy.json, else built-in defaults)
  --timeout-ms N  limit per run (default ${DEFAULT_TIMEOUT_MS})

Exit status: 0 passed, 1 rejected, 2 could not vet (e.g. strace missing: apt-get install -y strace).`,
  async run(argv) {
    const { flags, positionals } = parseArgs(argv, ["policy", "timeout-ms"], ["json"]);
    if (positionals.length !== 1) throw new UsageError(`expected one PATH, got ${positionals.length}`);
    const timeout = flags["timeout-ms"];
    const timeoutMs = typeof timeout === "string" ? Number(timeout) : DEFAULT_TIMEOUT_MS;
    if (!Number.isInteger(timeoutMs) || timeoutMs <= 0)
      throw new UsageError(`expected --timeout-ms to be a positive integer, got ${JSON.stringify(timeout)}`);
    let policy;
    try {
      policy = loadPolicy(typeof flags.policy === "string" ? flags.policy : undefined);
    } catch (err) {
      console.error(`aip vet: ${(err as Error).message}`);
      return VET_EXIT.couldNotVet;
    }
    // The agent runs in its own process group (so a timeout can kill it whole), out of reach of the
    // terminal's Ctrl-C: exit through process.exit, whose hook kills the runs in progress.
    process.once("SIGINT", () => process.exit(130));
    process.once("SIGTERM", () => process.exit(143));
    const report = await vetAgent(positionals[0]!, { policy, timeoutMs });
    if (flags.json) console.log(JSON.stringify(report, null, 2));
    else process.stdout.write(formatReport(report));
    return report.couldNotVet ? VET_EXIT.couldNotVet : report.ok ? VET_EXIT.pass : VET_EXIT.fail;
  },
};
