/**
 * complete-lite's typed engine (docs/performance.md, "Type-aware completion"): on a generated 200-file
 * workspace, the first request (the checker still loading: answered within the budget, from the
 * syntactic engine if need be), the time until the checker answers, then keystroke-by-keystroke
 * latency on a 2,000-line file with imports after a warm-up line, and the agent's RSS with the
 * workspace open.
 */
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { httpRequest, invokeHttp } from "../../protocol/transport/client.js";
import { benchDir, DIST, rssMiB, startProc } from "../lib/procs.js";
import { table, type ScenarioBody } from "../lib/scenario.js";
import { percentile } from "../../protocol/util/percentile.js";

export const FILES = 200;
export const BIG_LINES = 2000;

export function module(i: number): string {
  const deps = [i - 1, Math.floor(i / 2)].filter((d) => d >= 0 && d !== i);
  const imports = [...new Set(deps)].map((d) => `import { Service${d}, helper${d} } from "./mod${d}.js";`).join("\n");
  return `${imports}
export interface Options${i} {
  name: string;
  retries?: number;
  tags: string[];
}
/** Service number ${i}. */
export class Service${i} {
  private readonly cache = new Map<string, number>();
  constructor(readonly options: Options${i}) {}
  lookup(key: string): number | undefined {
    return this.cache.get(key);
  }
  store(key: string, value: number): void {
    this.cache.set(key, value);
  }
  get label(): string {
    return this.options.name.toUpperCase();
  }
}
export function helper${i}(input: string): Options${i} {
  return { name: input.trim(), tags: input.split(",") };
}
`;
}

/** A 2,000-line file importing ten modules, made of functions using them. */
export function bigFile(): string {
  const lines = Array.from({ length: 10 }, (_, d) => `import { Service${d}, helper${d} } from "./mod${d}.js";`);
  for (let f = 0; lines.length < BIG_LINES - 10; f++) {
    const d = f % 10;
    lines.push(
      `export function work${f}(raw: string): number {`,
      `  const options = helper${d}(raw);`,
      `  const service = new Service${d}(options);`,
      `  service.store(options.name, options.tags.length);`,
      `  const found = service.lookup(raw) ?? 0;`,
      `  return found + service.label.length;`,
      `}`,
    );
  }
  lines.push(
    "export function typing(raw: string): number {",
    "  // the cursor types here",
    "  return raw.length;",
    "}",
  );
  return lines.join("\n") + "\n";
}

/** The keystrokes: these lines typed one character at a time where the cursor is. */
/** Write the generated workspace under `root` (a tsconfig, FILES - 1 modules and src/big.ts); returns big.ts's text. */
export function writeWorkspace(root: string): string {
  mkdirSync(join(root, "src"), { recursive: true });
  writeFileSync(
    join(root, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { strict: true, target: "ES2022", module: "NodeNext", lib: ["ES2022"] } }),
  );
  for (let i = 0; i < FILES - 1; i++) writeFileSync(join(root, "src", `mod${i}.ts`), module(i));
  const big = bigFile();
  writeFileSync(join(root, "src", "big.ts"), big);
  return big;
}

export const WARMUP_LINE = "  const first = helper3(raw).name.trim();";
export const TYPED_LINES = [
  "  const options = helper4(raw);",
  "  const service = new Service4(options);",
  "  service.store(options.name.toLowerCase(), options.tags.length);",
  "  const value = service.lookup(raw) ?? service.label.length;",
];

/** What complete-lite answered at one keystroke: the time over its socket, the engine, the items, the stage times. */
export interface Answered {
  ms: number;
  engine: string;
  items: { label: string }[];
  /** The agent's stage times (timings_ms): where a slow keystroke's time went. */
  stages: Record<string, number>;
}

/** A `complete` call on src/big.ts of the workspace at `root`, over complete-lite's socket, at an offset in `source`. */
export function completeAsker(
  socket: string,
  root: string,
): (source: string, offset: number, constraints?: Record<string, unknown>) => Promise<Answered> {
  return async (source, offset, constraints = {}) => {
    const before = source.slice(0, offset);
    const line = before.split("\n").length;
    const column = offset - (before.lastIndexOf("\n") + 1);
    const t0 = performance.now();
    const r = await invokeHttp(
      socket,
      {
        action: "complete",
        context: { workspace_root: root, file_path: "src/big.ts", source_code: source, cursor: { line, column } },
        constraints: { max_items: 20, ...constraints },
      },
      70_000,
    );
    const ms = performance.now() - t0;
    const json = r.json as {
      payload?: { engine?: string; items?: { label: string }[] };
      timings_ms?: Record<string, number>;
    };
    return {
      ms,
      engine: json.payload?.engine ?? "error",
      items: json.payload?.items ?? [],
      stages: json.timings_ms ?? {},
    };
  };
}

/** Types `lines` into `big` at `cursor` one character at a time, asking at each keystroke; `key` is the line typed so far. */
export async function typeLines(
  big: string,
  cursor: number,
  lines: readonly string[],
  ask: (source: string, offset: number) => Promise<Answered>,
): Promise<(Answered & { key: string })[]> {
  const out: (Answered & { key: string })[] = [];
  for (const { text, at } of keystrokes(big, cursor, lines)) {
    const r = await ask(text, at);
    out.push({ ...r, key: text.slice(text.lastIndexOf("\n", at - 2) + 1, at).trim() });
  }
  return out;
}

/** The buffer after each keystroke of typing `lines` into `big` at `cursor`, and the cursor after it. */
export function* keystrokes(
  big: string,
  cursor: number,
  lines: readonly string[],
): Generator<{ text: string; at: number }> {
  let text = big;
  let at = cursor;
  for (const l of lines)
    for (const ch of `${l}\n`) {
      text = text.slice(0, at) + ch + text.slice(at);
      at++;
      yield { text, at };
    }
}

export const typedCompletion: ScenarioBody = {
  async run(ctx) {
    const dir = benchDir();
    const root = join(dir, "ws");
    const big = writeWorkspace(root);
    const socket = join(dir, "lite.sock");
    const agent = await startProc(join(DIST, "agents/complete-lite/main.js"), ["--listen", socket], socket);
    try {
      const ask = completeAsker(socket, root);
      const cursor = big.indexOf("  // the cursor types here");
      const first = await ask(big, cursor);
      ctx.progress(`[typed-completion] first request: ${first.ms.toFixed(0)} ms, engine ${first.engine}`);
      const t0 = performance.now();
      const ready = await ask(big, cursor, { timeout_ms: 120_000, typed_wait_ms: 60_000 });
      const readyMs = first.ms + (performance.now() - t0);
      ctx.progress(`[typed-completion] checker ready after ${readyMs.toFixed(0)} ms (engine ${ready.engine})`);
      const type = (lines: readonly string[]) => typeLines(big, cursor, lines, ask);
      /** The workspace's program rebuilds and answers from an older program (builds before stale.ts: null). */
      const counts = async () => {
        const health = JSON.parse((await httpRequest(socket, { path: "/healthz" })).body) as {
          typed?: { workspaces?: { root: string; rebuilds?: number; stale_answers?: number }[] };
        };
        const ws = health.typed?.workspaces?.find((w) => w.root === root || w.root === realpathSync(root));
        return { rebuilds: ws?.rebuilds ?? null, stale: ws?.stale_answers ?? null };
      };
      await type([WARMUP_LINE]);
      const before = await counts();
      const keys = await type(TYPED_LINES);
      const after = await counts();
      const rss = agent.child.pid !== undefined ? rssMiB(agent.child.pid) : null;
      const sorted = keys.map((k) => k.ms).sort((a, b) => a - b);
      const typedShare = Math.round((100 * keys.filter((k) => k.engine === "typed").length) / keys.length);
      const results = {
        first_request_ms: Math.round(first.ms),
        first_request_engine: first.engine,
        checker_ready_ms: Math.round(readyMs),
        keystrokes: keys.length,
        keystroke_p50_ms: Math.round(percentile(sorted, 50) * 10) / 10,
        keystroke_p95_ms: Math.round(percentile(sorted, 95) * 10) / 10,
        keystroke_max_ms: Math.round((sorted.at(-1) ?? 0) * 10) / 10,
        typed_share_pct: typedShare,
        program_rebuilds: after.rebuilds !== null && before.rebuilds !== null ? after.rebuilds - before.rebuilds : null,
        stale_answers: after.stale !== null && before.stale !== null ? after.stale - before.stale : null,
        rss_mib: rss,
        /** The ten slowest keystrokes: the line up to the cursor, the engine that answered, ms, the agent's stage times (timings_ms). */
        slowest: [...keys]
          .sort((a, b) => b.ms - a.ms)
          .slice(0, 10)
          .map((k) => `${k.key} | ${k.engine} ${k.ms.toFixed(1)} ${JSON.stringify(k.stages)}`),
      };
      ctx.progress(`[typed-completion] ${JSON.stringify(results)}`);
      const markdown = [
        `A generated workspace of ${FILES} TypeScript files (tsconfig.json, ES2022 lib); the edited file has ${BIG_LINES} lines and imports ten of them. Keystrokes: ${keys.length} characters typed one at a time after a warm-up line, each a full request over the agent's socket with the default budget. Targets: first request <= 1500 ms, keystroke p95 <= 25 ms.`,
        "",
        table(
          [
            "first request ms (engine)",
            "checker ready ms",
            "keystroke p50 ms",
            "keystroke p95 ms",
            "typed answers %",
            "program rebuilds",
            "agent RSS MiB",
          ],
          [
            [
              `${results.first_request_ms} (${first.engine})`,
              results.checker_ready_ms,
              results.keystroke_p50_ms,
              results.keystroke_p95_ms,
              typedShare,
              results.program_rebuilds ?? "n/a",
              rss,
            ],
          ],
        ),
      ].join("\n");
      return { parameters: { files: FILES, big_lines: BIG_LINES, keystrokes: keys.length }, results, markdown };
    } finally {
      await agent.stop();
    }
  },
};
