/** Results files: one JSON per scenario and day, and the day's markdown report rebuilt from them. */
import { cpus, freemem, loadavg, release, totalmem } from "node:os";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface Machine {
  cpus: number;
  cpu_model: string;
  memory_gib: number;
  free_memory_gib: number;
  node: string;
  kernel: string;
  loadavg_1m: number;
}

export function machine(): Machine {
  const gib = (b: number): number => Math.round((b / 1024 ** 3) * 10) / 10;
  return {
    cpus: cpus().length,
    cpu_model: cpus()[0]?.model ?? "unknown",
    memory_gib: gib(totalmem()),
    free_memory_gib: gib(freemem()),
    node: process.version,
    kernel: release(),
    loadavg_1m: Math.round(loadavg()[0]! * 100) / 100,
  };
}

export interface ScenarioFile {
  scenario: string;
  title: string;
  date: string;
  started_at: string;
  seconds: number;
  quick: boolean;
  machine: Machine;
  parameters: Record<string, unknown>;
  results: unknown;
  markdown: string;
}

export function writeScenario(dir: string, file: ScenarioFile): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${file.date}-${file.scenario}.json`);
  writeFileSync(path, JSON.stringify(file, null, 2) + "\n");
  return path;
}

/** Rebuild `<date>-report.md` from every `<date>-<scenario>.json` in `dir`, in `order`. */
export function writeReport(dir: string, date: string, order: string[]): string {
  // Only the benchmark scenarios: the reliability suites write their own figures beside them.
  const names = new Set(order.map((n) => `${date}-${n}.json`));
  const files = readdirSync(dir)
    .filter((f) => names.has(f))
    .map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")) as Partial<ScenarioFile>)
    // A file of the same name written by another tool (a dated results file) is not a scenario's.
    .filter((f): f is ScenarioFile => f.machine !== undefined && typeof f.markdown === "string")
    .sort((a, b) => order.indexOf(a.scenario) - order.indexOf(b.scenario));
  const lines = [
    `# agency benchmarks, ${date}`,
    "",
    "Reproduce: `npm run bench` (all), `npm run bench -- --only NAME`, `--quick` for short runs, `--socket PATH` to add another proxy to the comparisons.",
    "",
    "Configurations compared are run interleaved (A B A B …) and reported as medians over rounds, with ratios. The machine is shared (other builds and tests run on the same cores while this runs): absolute figures are noisy; the ratios, measured side by side, are what to read.",
    "",
  ];
  for (const f of files) {
    const m = f.machine;
    lines.push(
      `## ${f.title}`,
      "",
      `\`${f.scenario}\` — ${f.started_at}, ${f.seconds} s${f.quick ? ", **quick run**" : ""}; ${m.cpus} × ${m.cpu_model}, ${m.memory_gib} GiB RAM, Node ${m.node}, Linux ${m.kernel}, load average ${m.loadavg_1m} at start.`,
      "",
      f.markdown,
      "",
    );
  }
  const path = join(dir, `${date}-report.md`);
  writeFileSync(path, lines.join("\n"));
  return path;
}
