/** What a benchmark scenario is, and the A B A B … interleaving every comparison uses. */
import { medianOf, type LatencySummary } from "./stats.js";

export interface ScenarioContext {
  quick: boolean;
  /** Another proxy's socket (--socket): compared alongside, where the scenario allows. */
  socket: string | undefined;
  progress(message: string): void;
}

export interface ScenarioOutput {
  /** The parameters the scenario ran with (durations, rounds, concurrency). */
  parameters: Record<string, unknown>;
  results: unknown;
  /** The report section (markdown, without its heading). */
  markdown: string;
}

/** What a scenario's module exports: its run. Its name and title are in bench/scenarios/index.ts. */
export interface ScenarioBody {
  run(ctx: ScenarioContext): Promise<ScenarioOutput>;
}

/** A scenario as the bench lists it: name and title known without loading its module, which `load` imports. */
export interface Scenario {
  name: string;
  title: string;
  load(): Promise<ScenarioBody>;
}

export interface Contender {
  name: string;
  measure(): Promise<LatencySummary>;
}

export interface Compared {
  rounds: Record<string, LatencySummary[]>;
  median: Record<string, LatencySummary>;
}

/**
 * Run each contender once per round, in turn (A B A B …), so drifting machine load hits all alike; medians per
 * contender. With `alternate`, every second round runs them in reverse (A B B A A B …), so neither is always
 * the one measured right after the other.
 */
export async function interleave(
  label: string,
  contenders: Contender[],
  rounds: number,
  progress: (m: string) => void,
  alternate = false,
): Promise<Compared> {
  const out: Record<string, LatencySummary[]> = Object.fromEntries(contenders.map((c) => [c.name, []]));
  for (let r = 1; r <= rounds; r++) {
    for (const c of alternate && r % 2 === 0 ? [...contenders].reverse() : contenders) {
      const s = await c.measure();
      out[c.name]!.push(s);
      progress(
        `${label} round ${r}/${rounds} ${c.name}: ${s.rps} req/s, p50 ${s.p50_ms} p95 ${s.p95_ms} p99 ${s.p99_ms} ms${s.errors ? `, ${s.errors} errors` : ""}`,
      );
    }
  }
  return { rounds: out, median: Object.fromEntries(Object.entries(out).map(([k, v]) => [k, medianOf(v)])) };
}

/** a / b rounded, or null when b is 0. */
export function ratio(a: number, b: number): number | null {
  return b === 0 ? null : Math.round((a / b) * 100) / 100;
}

/** A markdown table. */
export function table(head: string[], rows: (string | number | null)[][]): string {
  const cell = (v: string | number | null): string => (v === null ? "–" : String(v));
  return [
    `| ${head.join(" | ")} |`,
    `|${head.map(() => "---").join("|")}|`,
    ...rows.map((r) => `| ${r.map(cell).join(" | ")} |`),
  ].join("\n");
}

/** An AIP-1 echo request; `delayMs` asks agent-dummy to take that long. */
export function echoBody(delayMs?: number): string {
  return JSON.stringify({
    action: "echo",
    context: { source_code: "const a = 1;\nconst b = 2;\n" },
    constraints: delayMs ? { delay_ms: delayMs, timeout_ms: 10_000 } : {},
  });
}
