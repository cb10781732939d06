/** The manifest check: `--manifest` must print one valid AGENT_MANIFEST.json; schema errors are listed with their paths. */
import { ManifestSchema, formatIssues, type AgentManifest } from "../../../protocol/contract/schemas.js";
import type { Violation } from "./rules.js";

/** Judge what `--manifest` printed. */
export function judgeManifest(stdout: string): { manifest?: AgentManifest; violations: Violation[] } {
  const text = stdout.trim();
  if (text.length === 0) {
    return {
      violations: [
        {
          rule: "manifest-missing",
          detail: "--manifest printed nothing; it must print the agent's AGENT_MANIFEST.json",
        },
      ],
    };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return {
      violations: [
        {
          rule: "manifest-missing",
          detail: `--manifest did not print JSON (${(err as Error).message})`,
          evidence: text.slice(0, 300),
        },
      ],
    };
  }
  const parsed = ManifestSchema.safeParse(json);
  if (!parsed.success) {
    return {
      violations: formatIssues(parsed.error).map((i) => ({
        rule: "manifest-invalid",
        detail: `${i.path}: ${i.message}`,
        evidence: text.slice(0, 300),
      })),
    };
  }
  return { manifest: parsed.data, violations: [] };
}
