/** Memory to declare for a model: the file (mapped) plus the KV cache of every sequence plus runtime overhead. */
import { statSync } from "node:fs";
import type { ModelConfig } from "./config.js";

const MIB = 1024 * 1024;
/** Node, the parser, prettier and tiktoken. */
const OVERHEAD_MIB = 256;

/** e.g. "1290Mi"; undefined when the file cannot be read. */
export function memoryFor(path: string, config: Pick<ModelConfig, "contextSize" | "sequences">): string | undefined {
  let bytes: number;
  try {
    bytes = statSync(path).size;
  } catch {
    return undefined;
  }
  // KV cache estimate without the model's dimensions: ~0.1 MiB per token for a 1B model in f16.
  const kvMib = Math.ceil(config.contextSize * config.sequences * 0.1);
  return `${Math.ceil(bytes / MIB) + kvMib + OVERHEAD_MIB}Mi`;
}
