/** One `aip` subcommand: its help text and what it does (returns the exit status); scripts/aip.ts holds its summary. */
import { parseArgs as parseNodeArgs, type ParseArgsConfig } from "node:util";

export interface Command {
  usage: string;
  run(argv: string[]): Promise<number>;
}

/** Exit statuses shared by every subcommand. */
export const EXIT = { ok: 0, aipError: 1, usage: 2 } as const;

export class UsageError extends Error {}

export interface ParsedArgs {
  flags: Record<string, string | true>;
  /** Every value of a repeatable flag, in order. */
  lists: Record<string, string[]>;
  positionals: string[];
}

/**
 * Parse `--name value`, `--name=value` and boolean `--name` flags with node:util's parseArgs (strict):
 * `valued` lists the flags that take a value, `repeatable` those of them that may be given more than once
 * (all values kept, in order); anything else starting with `--` must be in `booleans`, or it is a usage
 * error naming it. Every tool here parses its arguments through this function.
 */
export function parseArgs(
  argv: string[],
  valued: string[],
  booleans: string[] = [],
  repeatable: string[] = [],
): ParsedArgs {
  const options: NonNullable<ParseArgsConfig["options"]> = {};
  for (const name of valued) options[name] = { type: "string", multiple: repeatable.includes(name) };
  for (const name of booleans) options[name] = { type: "boolean" };
  let parsed;
  try {
    parsed = parseNodeArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    const e = err as Error & { code?: string };
    const name = /'(--?[\w-]+)/.exec(e.message)?.[1] ?? "";
    if (e.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") throw new UsageError(`unknown option ${name}`);
    if (e.code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE")
      throw new UsageError(
        valued.includes(name.replace(/^-+/, "")) ? `${name} needs a value` : `${name} takes no value`,
      );
    throw new UsageError(e.message);
  }
  const flags: Record<string, string | true> = {};
  const lists: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(parsed.values)) {
    if (Array.isArray(value)) {
      lists[name] = value.map(String);
      const last = value[value.length - 1];
      if (last !== undefined) flags[name] = String(last);
    } else if (value === true) flags[name] = true;
    else if (typeof value === "string") flags[name] = value;
  }
  return { flags, lists, positionals: parsed.positionals };
}
