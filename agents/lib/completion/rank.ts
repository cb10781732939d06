/** Ranking completion candidates: prefix match, scope distance, recency (how near the definition is to the cursor). */

export interface Candidate {
  label: string;
  kind: string;
  insert_text: string;
  detail: string;
  /** Base score by source (own members and inner scopes higher, globals lower). */
  base: number;
  /** The defining line, for recency; undefined for keywords and globals. */
  line?: number;
}

export interface CompletionItem {
  label: string;
  kind: string;
  insert_text: string;
  detail: string;
}

/** True when every character of `prefix` appears in `label` in order, each at a word boundary or right after the previous one. */
function humpMatch(label: string, prefix: string): boolean {
  let j = 0;
  for (let i = 0; i < label.length && j < prefix.length; i++) {
    const c = label[i]!;
    if (c.toLowerCase() !== prefix[j]!.toLowerCase()) continue;
    const boundary =
      i === 0 ||
      /[A-Z]/.test(c) ||
      label[i - 1] === "_" ||
      (j > 0 && label[i - 1]!.toLowerCase() === prefix[j - 1]!.toLowerCase());
    if (boundary) j++;
  }
  return j === prefix.length;
}

/** How well `label` matches what was typed; -1: not at all. */
export function matchScore(label: string, prefix: string): number {
  if (prefix === "") return 0;
  if (label === prefix) return 90; // already typed: still shown, below longer completions
  if (label.startsWith(prefix)) return 100;
  if (label.toLowerCase().startsWith(prefix.toLowerCase())) return 80;
  if (humpMatch(label, prefix)) return 50;
  return -1;
}

/** Filter and order candidates; ties break by label so the order is stable. */
export function rank(candidates: Candidate[], prefix: string, cursorLine: number, limit: number): CompletionItem[] {
  const scored: { c: Candidate; score: number }[] = [];
  const seen = new Set<string>();
  for (const c of candidates) {
    if (seen.has(`${c.kind}:${c.label}`)) continue;
    seen.add(`${c.kind}:${c.label}`);
    const m = matchScore(c.label, prefix);
    if (m < 0) continue;
    const recency = c.line === undefined ? 0 : 20 / (1 + Math.abs(cursorLine - c.line) / 50);
    scored.push({ c, score: m + c.base + recency });
  }
  scored.sort((a, b) => b.score - a.score || (a.c.label < b.c.label ? -1 : a.c.label > b.c.label ? 1 : 0));
  return scored
    .slice(0, limit)
    .map(({ c }) => ({ label: c.label, kind: c.kind, insert_text: c.insert_text, detail: c.detail }));
}
