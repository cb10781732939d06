/** Deterministic synthetic TypeScript sources and workspaces for the benchmarks (and the incremental-parse tests). */

/** One top-level unit of roughly 25 lines: a doc-commented function, class or interface, varied by `i`. */
function unit(i: number): string {
  switch (i % 3) {
    case 0:
      return `/** Computes the weighted score number ${i}. */
export function score${i}(values: number[], weight = ${(i % 7) + 1}): number {
  let total = 0;
  for (const v of values) {
    if (v < 0) throw new RangeError("negative value " + v);
    total += v * weight;
  }
  const mean = values.length === 0 ? 0 : total / values.length;
  return Math.round(mean * 100) / 100;
}

export const LIMIT_${i} = { max: ${i}, label: "limit-${i}" } as const;

`;
    case 1:
      return `/** Keeps a bounded queue of items (${i}). */
export class Queue${i}<T> {
  private readonly items: T[] = [];
  constructor(private readonly capacity: number, public name = "q${i}") {}

  /** Add an item; false when full. */
  push(item: T): boolean {
    if (this.items.length >= this.capacity) return false;
    this.items.push(item);
    return true;
  }

  async drain(limit?: number): Promise<T[]> {
    const n = limit ?? this.items.length;
    return this.items.splice(0, n);
  }

  get size(): number {
    return this.items.length;
  }
}

`;
    default:
      return `export interface Options${i} {
  name: string;
  retries?: number;
  tags: string[];
}

type Mode${i} = "fast" | "safe";

const helper${i} = (opts: Options${i}, mode: Mode${i} = "safe"): string => {
  const parts = [opts.name, String(opts.retries ?? 0), mode];
  return parts.join(":") + opts.tags.join(",");
};

export function useHelper${i}(name: string): string {
  return helper${i}({ name, tags: ["a", "b"] });
}

`;
  }
}

/** A TypeScript module of at least `lines` lines. */
export function generateSource(lines: number): string {
  const header = `/** Synthetic module for benchmarks. */\nimport { readFileSync } from "node:fs";\nimport * as path from "node:path";\n\n`;
  let out = header;
  let count = header.split("\n").length;
  for (let i = 0; count < lines; i++) {
    const u = unit(i);
    out += u;
    count += u.split("\n").length - 1;
  }
  return out + `export const ROOT = path.dirname(readFileSync.name);\n`;
}

/** File contents for a synthetic workspace of `files` files: code in folders, plus some markdown. */
export function* generateWorkspace(files: number): Generator<[string, string]> {
  // A larger vocabulary than a toy one: in a real workspace most words are rare, so a query matches a few
  // hundred chunks, not a third of the index.
  const base = [
    "cache",
    "router",
    "socket",
    "parser",
    "token",
    "buffer",
    "stream",
    "health",
    "metric",
    "queue",
    "limit",
    "retry",
    "trace",
    "config",
    "render",
    "session",
    "cursor",
    "symbol",
    "schema",
    "worker",
    "budget",
    "canary",
    "vetting",
    "manifest",
    "pool",
    "timer",
    "logger",
    "channel",
    "signal",
    "deadline",
    "registry",
    "snippet",
    "outline",
    "index",
    "ranking",
    "layout",
    "widget",
    "storage",
    "upload",
    "payment",
    "invoice",
    "account",
    "profile",
    "avatar",
    "search",
    "filter",
    "sorter",
    "pager",
    "dialog",
    "toast",
  ];
  const words = base.flatMap((w, i) => [w, `${w}${["Map", "Set", "List", "Node", "Tree"][i % 5]}`]);
  for (let i = 0; i < files; i++) {
    const a = words[i % words.length]!;
    const b = words[(i * 7 + 3) % words.length]!;
    const dir = `pkg${i % 50}/${a.replace(/[A-Z].*$/, "")}`;
    if (i % 10 === 9) {
      yield [`${dir}/notes-${i}.md`, `# ${a} ${b} notes ${i}\n\nHow the ${a} talks to the ${b}; see ${a}${i}.ts.\n`];
      continue;
    }
    const A = a[0]!.toUpperCase() + a.slice(1);
    const B = b[0]!.toUpperCase() + b.slice(1);
    yield [
      `${dir}/${a}_${b}_${i}.ts`,
      `/** ${A} helpers for the ${b} layer (${i}). */
import { ${b}Config } from "../${b}/config.js";

export interface ${A}${B}Options${i} { size: number; ${b}Name: string }

export class ${A}${B}${i} {
  constructor(private readonly opts: ${A}${B}Options${i}) {}
  /** Open the ${a} for ${b}. */
  open${B}(id: number): string {
    return \`${a}:\${id}:\${this.opts.${b}Name}\`;
  }
  close${A}(): void {}
}

export function make${A}${i}(size = ${i % 13}): ${A}${B}${i} {
  return new ${A}${B}${i}({ size, ${b}Name: ${b}Config.name });
}
`,
    ];
  }
}
