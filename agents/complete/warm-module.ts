/**
 * What agent-complete's warm-up types into: a module in the shapes real TypeScript has (imports,
 * interfaces, generics, unions, enums, classes with accessors, async code, arrow functions, object
 * and array literals, template literals, `as`/`satisfies`, optional chaining, switch, try/catch,
 * namespaces, comments). V8 optimises a parser's or printer's code for the node kinds it has seen:
 * a warm-up on one small class and two functions left prettier and the parsers slower on the first
 * files with other syntax.
 */
export const WARM_MODULE = `import { readFile } from "node:fs/promises";
import type { Stats } from "node:fs";
import * as path from "node:path";

/** Options for {@link load}. */
export interface LoadOptions {
  retries: number;
  label?: string;
  readonly tags: readonly string[];
}

export type Shape = { kind: "circle"; radius: number } | { kind: "rect"; width: number; height: number };
export type Mapped<T> = { [K in keyof T]?: T[K] extends string ? number : T[K] };

export enum Level {
  Low = 1,
  High = Low << 2,
}

const enum Flag {
  On,
  Off,
}

export abstract class Base<T extends object = Record<string, unknown>> {
  protected constructor(protected readonly name: string) {}
  abstract describe(value: T): string;
}

export class Store<T> extends Base<{ id: string }> implements Iterable<T> {
  private readonly items = new Map<string, T>();
  static #count = 0;

  constructor(private readonly limit = 10) {
    super("store");
    Store.#count++;
  }

  /** Remember one item. */
  put(key: string, value: T): void {
    if (this.items.has(key)) throw new Error(\`duplicate \${key}\`);
    this.items.set(key, value);
  }

  get size(): number {
    return this.items.size;
  }

  describe(value: { id: string }): string {
    return \`\${this.name}:\${value.id} (\${this.items.size}/\${this.limit})\`;
  }

  *[Symbol.iterator](): Iterator<T> {
    for (const item of this.items.values()) yield item;
  }
}

export async function load(file: string, options: LoadOptions = { retries: 1, tags: [] }): Promise<string[]> {
  const text = await readFile(path.resolve(file), "utf8");
  const lines = text.split("\\n").filter((l) => l.trim() !== "");
  return lines.map((l, i) => \`\${options.label ?? "line"} \${i}: \${l}\`);
}

export function area(shape: Shape): number {
  switch (shape.kind) {
    case "circle":
      return Math.PI * shape.radius ** 2;
    case "rect": {
      const { width, height } = shape;
      return width * height;
    }
    default:
      return 0;
  }
}

export async function retry<T>(fn: () => Promise<T>, times = 3): Promise<T | undefined> {
  let last: unknown;
  for (let i = 0; i < times; i++) {
    try {
      return await fn();
    } catch (err) {
      last = err;
      if (err instanceof TypeError && err.message.includes("fatal")) break;
    } finally {
      void last;
    }
  }
  return undefined;
}

export const sizeOf = (stats?: Stats | null): number => stats?.size ?? -1;

export function group<T, K extends PropertyKey>(items: readonly T[], key: (item: T) => K): Record<K, T[]> {
  const out = {} as Record<K, T[]>;
  for (const item of items) (out[key(item)] ??= []).push(item);
  return out;
}

export namespace Format {
  export function pad(value: number, width = 2): string {
    const text = String(value);
    return text.length >= width ? text : "0".repeat(width - text.length) + text;
  }
}

export const DEFAULTS = {
  retries: 3,
  label: "entry",
  nested: { depth: 2, tags: ["a", "b"], level: Level.High, flag: Flag.On },
  pattern: /^[a-z]+(?:-[a-z]+)*$/i,
} satisfies Partial<LoadOptions> & Record<string, unknown>;
`;

/** 1-based lines of WARM_MODULE inside a function body where a statement starts: where the warm-up types. */
export function warmLines(): number[] {
  return WARM_MODULE.split("\n")
    .map((text, i) => [text, i + 1] as const)
    .filter(
      ([text]) =>
        /^ {4,}(const|let|return|if|for|throw|yield)\b/.test(text) ||
        /^ {2}(const|let|return|if|for|throw|switch)\b/.test(text),
    )
    .map(([, line]) => line);
}
