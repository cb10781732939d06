/** The vetting report: checks built from violations, the JSON shape, and the human table. */
import type { AgentManifest } from "../../../protocol/contract/schemas.js";
import type { Violation } from "./rules.js";
import type { Library } from "./static.js";

export interface VetCheck {
  name: string;
  ok: boolean;
  violations: Violation[];
}

export interface VetReport {
  ok: boolean;
  couldNotVet: boolean;
  executable: string;
  sha256: string;
  checks: VetCheck[];
  /** One line per violation ("rule: detail"), or why vetting could not run. */
  reasons: string[];
  /** The executable, then each interpreter that runs it. */
  interpreter: string[];
  libraries: Library[];
  /** Native addons (.node files) the agent loaded during the runs. */
  addons: string[];
  manifest?: AgentManifest;
  durationMs: number;
  vettedAt: string;
  /** True when this report came from the cache. */
  cached?: boolean;
}

/** Each check and the rules whose violations it collects, in report order. */
export const CHECKS: { name: string; rules: string[]; describes: string }[] = [
  { name: "executable", rules: ["executable"], describes: "an ELF or #! script whose interpreter chain resolves" },
  {
    name: "libraries",
    rules: ["gpu-library"],
    describes: "no GPU/driver library linked or loaded unless declared and allowed",
  },
  {
    name: "manifest",
    rules: ["manifest-missing", "manifest-invalid"],
    describes: "--manifest prints a valid AGENT_MANIFEST.json",
  },
  { name: "empty-input", rules: ["empty-input"], describes: "empty stdin answered with AIP_ERR_INVALID_JSON" },
  { name: "exit-status", rules: ["exit-status"], describes: "both runs exit 0" },
  {
    name: "network",
    rules: ["network", "unix-socket"],
    describes: "no IP sockets; Unix sockets only in the allowed directories",
  },
  {
    name: "filesystem",
    rules: ["write", "sensitive-read"],
    describes: "writes only under the write roots; no sensitive reads",
  },
  { name: "exec", rules: ["exec"], describes: "executes nothing but its own interpreter" },
  {
    name: "syscalls",
    rules: ["evasive-syscall", "trace-integrity"],
    describes: "no io_uring, open_by_handle_at, ptrace or process_vm_*; the trace left intact",
  },
  { name: "stderr", rules: ["stderr"], describes: "nothing written to stderr" },
  { name: "time-limit", rules: ["timeout"], describes: "each run finishes within the limit" },
];

/** Drop repeated (rule, detail) pairs, keeping the first evidence. */
export function dedupe(violations: Violation[]): Violation[] {
  const seen = new Set<string>();
  return violations.filter((v) => {
    const k = `${v.rule}\0${v.detail}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** Group violations into the checks (unknown rules land in a check of their own name). */
export function buildChecks(violations: Violation[]): VetCheck[] {
  const unique = dedupe(violations);
  const checks = CHECKS.map((c) => {
    const vs = unique.filter((v) => c.rules.includes(v.rule));
    return { name: c.name, ok: vs.length === 0, violations: vs };
  });
  const known = new Set(CHECKS.flatMap((c) => c.rules));
  for (const v of unique.filter((x) => !known.has(x.rule))) checks.push({ name: v.rule, ok: false, violations: [v] });
  return checks;
}

/** The table `aip vet` prints. */
export function formatReport(r: VetReport): string {
  const lines = [
    `aip vet ${r.executable}`,
    `  sha256 ${r.sha256 || "(unreadable)"}${r.cached ? "  (cached verdict)" : ""}`,
  ];
  if (r.interpreter.length > 1) lines.push(`  runs as ${r.interpreter.join(" → ")}`);
  if (r.manifest) lines.push(`  manifest ${r.manifest.name} ${r.manifest.version} (gpu: ${r.manifest.resources.gpu})`);
  lines.push("");
  if (r.couldNotVet) {
    lines.push(`COULD NOT VET: ${r.reasons.join("; ")}`);
    return lines.join("\n") + "\n";
  }
  for (const c of r.checks) {
    const describes = CHECKS.find((x) => x.name === c.name)?.describes ?? "";
    lines.push(`  ${c.ok ? "PASS" : "FAIL"}  ${c.name.padEnd(12)} ${c.ok ? describes : ""}`.trimEnd());
    for (const v of c.violations) {
      lines.push(`        [${v.rule}] ${v.detail}`);
      if (v.evidence)
        lines.push(
          ...v.evidence
            .split("\n")
            .slice(0, 3)
            .map((e) => `          evidence: ${e.length > 300 ? `${e.slice(0, 300)}…` : e}`),
        );
    }
  }
  const n = r.checks.reduce((s, c) => s + c.violations.length, 0);
  lines.push(
    "",
    r.ok
      ? `PASSED (${Math.round(r.durationMs)} ms)`
      : `REJECTED: ${n} violation${n === 1 ? "" : "s"} in ${r.checks
          .filter((c) => !c.ok)
          .map((c) => c.name)
          .join(", ")}`,
  );
  return lines.join("\n") + "\n";
}
