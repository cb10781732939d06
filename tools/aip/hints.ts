/**
 * What `aip invoke` adds to an agent's answer for a person at a terminal: the flag that supplies a
 * missing or invalid field (an agent names `context.workspace_root`, the user types `--workspace`), and
 * a note when a summary left re-exports unfollowed for want of a workspace.
 */
import type { Problem } from "../../protocol/contract/errors.js";

/** The `aip invoke` flag for each request field. */
const FLAGS: Record<string, string> = {
  "context.workspace_root": "--workspace DIR",
  "context.query": "--query TEXT",
  "context.source_code": "--file F",
  "context.file_path": "--file F",
  "context.cursor": "--line L --column C",
  "context.language": "--language LANG",
};

/** The field paths a problem names: `fields`, `errors[].path`, else a `context.x`/`constraints.x` at the start of its detail. */
function fieldsOf(problem: Problem): string[] {
  const out = new Set<string>();
  if (Array.isArray(problem.fields)) for (const f of problem.fields) if (typeof f === "string") out.add(f);
  if (Array.isArray(problem.errors))
    for (const e of problem.errors as { path?: unknown }[]) if (typeof e.path === "string") out.add(e.path);
  const lead = /(?:^|field: )((?:context|constraints)\.[\w.]+)/.exec(problem.detail)?.[1];
  if (out.size === 0 && lead) out.add(lead);
  return [...out];
}

/** `--workspace DIR` for `context.workspace_root`, `--constraint limit=JSON` for `constraints.limit`. */
export function flagFor(field: string): string | undefined {
  if (FLAGS[field]) return FLAGS[field];
  const c = /^constraints\.(\w+)/.exec(field);
  if (c) return c[1] === "timeout_ms" ? "--timeout MS" : `--constraint ${c[1]}=JSON`;
  return undefined;
}

/** "add --workspace DIR" (or "fix …" for an invalid value), or undefined when no flag supplies the fields named. */
export function flagHint(problem: Problem): string | undefined {
  const flags = [
    ...new Set(
      fieldsOf(problem)
        .map(flagFor)
        .filter((f): f is string => f !== undefined),
    ),
  ];
  if (flags.length === 0) return undefined;
  const verb = problem.type === "AIP_ERR_MISSING_FIELD" ? "add" : "check";
  return `${verb} ${flags.join(" and ")}`;
}

/** A note when a summary's re-exports were not followed because no workspace was given. */
export function barrelNote(payload: unknown, hasWorkspace: boolean): string | undefined {
  if (hasWorkspace) return undefined;
  const unresolved = (payload as { outline?: { unresolved_exports?: { from: string; reason: string }[] } })?.outline
    ?.unresolved_exports;
  const missed = (unresolved ?? []).filter((u) => u.reason.startsWith("no workspace_root"));
  if (missed.length === 0) return undefined;
  const from = missed.map((u) => u.from);
  return `note: ${missed.length} re-export${missed.length > 1 ? "s" : ""} (${from.slice(0, 3).join(", ")}${from.length > 3 ? ", …" : ""}) not followed: add --workspace DIR to list what they export`;
}
