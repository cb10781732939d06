/** One `aip` subcommand: its one-line summary, its help text and what it does (returns the exit status). */
export interface Command {
  summary: string;
  usage: string;
  run(argv: string[]): Promise<number>;
}

/** Exit statuses shared by every subcommand. */
export const EXIT = { ok: 0, aipError: 1, usage: 2 } as const;

export class UsageError extends Error {}

export interface ParsedArgs {
  flags: Record<string, string | true>;
  positionals: string[];
}

/**
 * Parse `--name value`, `--name=value` and boolean `--name` flags. `valued` lists the flags that take a value;
 * anything else starting with `--` must be in `booleans`, or it is a usage error naming it.
 */
export function parseArgs(argv: string[], valued: string[], booleans: string[] = []): ParsedArgs {
  const flags: Record<string, string | true> = {};
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith("--") || arg === "--") {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (valued.includes(name)) {
      const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
      if (value === undefined || (eq === -1 && value.startsWith("--"))) throw new UsageError(`--${name} needs a value`);
      flags[name] = value;
    } else if (booleans.includes(name) && eq === -1) {
      flags[name] = true;
    } else {
      throw new UsageError(`unknown option --${name}`);
    }
  }
  return { flags, positionals };
}
