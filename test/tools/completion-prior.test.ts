/** The member-usage prior learned from a node_modules tree (tools/completion-prior.ts). */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { learnPrior, priorModule, type Prior } from "../../tools/completion-prior.js";
import { tempDir } from "../helpers.js";

function pkg(dir: string, name: string, files: Record<string, string>): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name, version: "1.0.0" }));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(dir, rel, ".."), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
}

describe("learnPrior", () => {
  let t: { dir: string; cleanup: () => void };
  let prior: Prior;
  beforeAll(() => {
    t = tempDir("aipprior-");
    const nm = join(t.dir, "node_modules");
    pkg(join(nm, "alpha"), "alpha", {
      "index.js": "s.startsWith('a'); Object.keys(o); a.b.chained; // x.commentOnly\nconst u = 'http://example.com';",
      "lib/more.mjs": "s.startsWith('b'); list.push(1);",
    });
    pkg(join(nm, "@scope/beta"), "@scope/beta", {
      "index.cjs": "s.startsWith(x); Object.keys(p); list.push(2); v.padEnd(3)",
    });
    pkg(join(nm, "alpha/node_modules/gamma"), "gamma", { "g.js": "list.push(3); q.chained" });
    pkg(join(nm, "excluded"), "excluded", { "e.js": "z.onlyInExcluded(); z.onlyInExcluded(); w.padEnd(1)" });
    pkg(join(nm, "typesonly"), "typesonly", {
      "index.d.ts": "declare const x: { declaredOnly: number }; x.declaredOnly;",
    });
    prior = learnPrior(nm, new Set(["excluded"]));
  });
  afterAll(() => t.cleanup());

  const names = () => new Map(prior.names);

  it("counts packages (nested and scoped ones too), leaving out the excluded and declaration files", () => {
    expect(prior.packages).toBe(4); // alpha, @scope/beta, gamma, typesonly
    expect(names().has("onlyInExcluded")).toBe(false);
    expect(names().has("declaredOnly")).toBe(false);
  });

  it("keeps names used by two packages or more, most used first; chains count every link; comments and strings do not", () => {
    const n = names();
    expect(n.get("push")).toBe(1); // three packages: the top weight
    expect(n.get("startsWith")).toBeGreaterThan(0);
    expect(n.get("startsWith")).toBeLessThan(1);
    expect(n.has("chained")).toBe(true); // alpha `a.b.chained`, gamma `q.chained`
    expect(n.has("padEnd")).toBe(false); // one package once `excluded` is left out
    expect(n.has("commentOnly")).toBe(false);
    expect(n.has("com")).toBe(false);
  });

  it("counts Global.name pairs apart, and writes a module with both tables", () => {
    expect(new Map(prior.pairs).get("Object.keys")).toBe(1);
    const text = priorModule(prior, "a test tree");
    expect(text).toContain("export const NAMES = [");
    expect(text).toMatch(/"push:100 /);
    expect(text).toContain("Object.keys:100");
  });
});
