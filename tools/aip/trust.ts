/**
 * `aip trust DIR`, `aip trust --list`, `aip untrust DIR`: the owner's record of which workspaces'
 * code the agency may run, sandboxed (docs/security.md, "Workspace trust"). Kept in the state dir;
 * agents read it at each decision, so no reload is needed.
 */
import { realpathSync, statSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { readTrustFile, writeTrustFile } from "../../agents/lib/sandbox/trust.js";
import { loadConfig } from "../../orchestrator/core/config.js";
import { TRUST_FILE_NAME } from "../../protocol/util/trust-env.js";
import { EXIT, UsageError, parseArgs, type Command } from "./command.js";

const OPTIONS = `  --state-dir DIR  the agency's state dir (default: the config's state_dir)
  --config FILE    the agency config (default: $AIP_CONFIG or manifests/agency.json)`;

function trustFile(flags: Record<string, string | true>): string {
  if (typeof flags["state-dir"] === "string") return join(resolve(flags["state-dir"]), TRUST_FILE_NAME);
  const config = loadConfig(typeof flags.config === "string" ? flags.config : undefined);
  return join(config.stateDir, TRUST_FILE_NAME);
}

function directory(arg: string): string {
  const abs = isAbsolute(arg) ? arg : resolve(arg);
  let real: string;
  try {
    real = realpathSync(abs);
  } catch {
    throw new UsageError(`${arg} does not exist`);
  }
  if (!statSync(real).isDirectory()) throw new UsageError(`${arg} is not a directory`);
  return real;
}

export const trust: Command = {
  usage: `Usage: aip trust DIR [options]
       aip trust --list [options]

Records DIR (and everything below it) as trusted in the state dir: agents may then run its code
(test runners, config files, package scripts), always inside the bubblewrap sandbox. Nothing of an
untrusted workspace runs. Also trusted: the config's trusted_workspaces, or AIP_TRUSTED_WORKSPACES.

${OPTIONS}`,
  async run(argv) {
    const { flags, positionals } = parseArgs(argv, ["state-dir", "config"], ["list"]);
    const file = trustFile(flags);
    if (flags.list) {
      if (positionals.length > 0) throw new UsageError("--list takes no DIR");
      for (const w of readTrustFile(file)) console.log(w);
      return Promise.resolve(EXIT.ok);
    }
    if (positionals.length !== 1) throw new UsageError(`expected one DIR, got ${positionals.length}`);
    const dir = directory(positionals[0]!);
    try {
      writeTrustFile(file, [...readTrustFile(file), dir]);
    } catch (err) {
      console.error(`aip trust: ${(err as Error).message}`);
      return Promise.resolve(EXIT.aipError);
    }
    console.log(`trusted ${dir} (recorded in ${file})`);
    return Promise.resolve(EXIT.ok);
  },
};

export const untrust: Command = {
  usage: `Usage: aip untrust DIR [options]

Removes DIR from the workspaces \`aip trust\` recorded. (Entries of the config's trusted_workspaces
or AIP_TRUSTED_WORKSPACES are changed there.)

${OPTIONS}`,
  async run(argv) {
    const { flags, positionals } = parseArgs(argv, ["state-dir", "config"]);
    if (positionals.length !== 1) throw new UsageError(`expected one DIR, got ${positionals.length}`);
    const file = trustFile(flags);
    const arg = positionals[0]!;
    let dir = isAbsolute(arg) ? resolve(arg) : resolve(arg);
    try {
      dir = realpathSync(dir);
    } catch {
      // gone: remove it by the name given
    }
    const before = readTrustFile(file);
    const after = before.filter((w) => w !== dir);
    if (after.length === before.length) {
      console.error(`aip untrust: ${dir} was not trusted by aip trust`);
      return Promise.resolve(EXIT.aipError);
    }
    try {
      writeTrustFile(file, after);
    } catch (err) {
      console.error(`aip untrust: ${(err as Error).message}`);
      return Promise.resolve(EXIT.aipError);
    }
    console.log(`untrusted ${dir}`);
    return Promise.resolve(EXIT.ok);
  },
};
