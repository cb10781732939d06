#!/usr/bin/env node
/** `npm run make-tiny-gguf -- OUT.gguf`: write the tiny test model (tools/tiny-gguf.ts) to a file. */
import { UsageError, parseArgs } from "../tools/aip/command.js";
import { writeTinyGguf } from "../tools/tiny-gguf.js";

const USAGE = "Usage: make-tiny-gguf OUT.gguf [--no-fim] [--layers 1|2] [--seed N] [--pre NAME (default qwen2)]";

try {
  const { flags, positionals } = parseArgs(process.argv.slice(2), ["layers", "seed", "pre"], ["no-fim", "help"]);
  if (flags.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const out = positionals[0];
  if (positionals.length !== 1 || out === undefined) throw new UsageError("expected exactly one OUT.gguf");
  const layers = flags.layers === undefined ? undefined : Number(flags.layers);
  if (layers !== undefined && layers !== 1 && layers !== 2) throw new UsageError("--layers must be 1 or 2");
  const seed = flags.seed === undefined ? undefined : Number(flags.seed);
  if (seed !== undefined && !Number.isInteger(seed)) throw new UsageError("--seed must be an integer");
  writeTinyGguf(out, {
    fim: !flags["no-fim"],
    ...(layers === 2 ? { layers: 2 as const } : {}),
    ...(seed !== undefined ? { seed } : {}),
    ...(typeof flags.pre === "string" ? { pre: flags.pre } : {}),
  });
  process.stdout.write(`${out}\n`);
} catch (err) {
  if (!(err instanceof UsageError)) throw err;
  process.stderr.write(`make-tiny-gguf: ${err.message}\n${USAGE}\n`);
  process.exit(2);
}
