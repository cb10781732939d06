/** docs/architecture.md names every source file of protocol/ and orchestrator/, and only files that exist. */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers.js";

const doc = readFileSync(join(ROOT, "docs/architecture.md"), "utf8");

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const rel = `${dir}/${name}`;
    if (statSync(join(ROOT, rel)).isDirectory()) return sources(rel);
    return name.endsWith(".ts") ? [rel] : [];
  });
}

/** The table rows under a heading, as [folder cell, file cell]. */
function tableRows(heading: string): string[][] {
  const section = doc.slice(doc.indexOf(heading));
  const end = section.indexOf("\n## ", 3);
  return (end > 0 ? section.slice(0, end) : section)
    .split("\n")
    .filter((l) => l.startsWith("| `"))
    .map((l) => l.split("|").map((c) => c.trim()));
}

/** Every file the orchestrator table names, as a repository path (a folder cell + each `x.ts` or `dir/`). */
function orchestratorMentions(): string[] {
  const named: string[] = [];
  for (const [, folder, files, part] of tableRows("## The orchestrator's parts")) {
    const base = `orchestrator/${folder!.replace(/`/g, "")}`;
    for (const m of `${files} ${part}`.matchAll(/`([\w-]+\.ts|[\w-]+\/)`/g)) named.push(join(base, m[1]!));
  }
  return named;
}

describe("docs/architecture.md", () => {
  it("names every source file of orchestrator/ (a folder row covers its subfolders)", () => {
    const named = orchestratorMentions();
    const root = ["orchestrator/orchestrator.ts", "orchestrator/frontdoor.ts", "orchestrator/entry.ts"];
    for (const f of root) expect(doc, f).toContain(`\`${f}\``);
    const missing = sources("orchestrator").filter(
      (f) => !root.includes(f) && !named.some((n) => (n.endsWith("/") ? f.startsWith(n) : f === n)),
    );
    expect(missing).toEqual([]);
  });

  it("every orchestrator file or folder it names exists", () => {
    const absent = orchestratorMentions().filter((n) => !existsSync(join(ROOT, n)));
    expect(absent).toEqual([]);
  });

  it("names each protocol folder, and every protocol/... path it mentions exists", () => {
    for (const dir of ["protocol/contract/", "protocol/util/", "protocol/transport/"])
      expect(doc).toContain(`\`${dir}\``);
    const paths = [...doc.matchAll(/`((?:protocol|orchestrator|agents|tools|bench)\/[\w./-]+)`/g)].map((m) => m[1]!);
    expect(paths.length).toBeGreaterThan(20);
    const absent = paths.filter((p) => !existsSync(join(ROOT, p.replace(/\/$/, ""))));
    expect(absent).toEqual([]);
  });

  it("every protocol source file sits in one of the three folders", () => {
    const loose = sources("protocol").filter((f) => relative("protocol", f).split("/").length !== 2);
    expect(loose).toEqual([]);
  });
});
