import { readFileSync } from "node:fs";
import { basename, extname, join } from "node:path";
import MiniSearch from "minisearch";
import { describe, expect, it } from "vitest";
import { listWorkspaceFiles } from "../../../agents/lib/code/files.js";
import { Bm25Index } from "../../../agents/search/bm25.js";
import { chunkFile } from "../../../agents/search/chunk.js";
import { processTerm } from "../../../agents/search/tokenize.js";
import { FIELD_BOOST, INDEXED, SEARCH_FIELDS, fieldTokens } from "../../../agents/search/workspace-index.js";

interface Doc {
  id: number;
  symbol: string;
  head: string;
  path: string;
  text: string;
}

const ROOT = join(import.meta.dirname, "../../..");

/** This repository's code and docs, chunked the way the search agent chunks them. */
async function repoDocs(): Promise<Doc[]> {
  const files = await listWorkspaceFiles(ROOT, {
    maxFiles: 5000,
    accept: (rel) => INDEXED.has(extname(rel).toLowerCase()) && !rel.startsWith("dist/"),
  });
  const docs: Doc[] = [];
  for (const f of files) {
    const ext = extname(f.rel).toLowerCase();
    const text = readFileSync(f.abs, "utf8");
    for (const c of chunkFile(text, ext === ".md", basename(f.rel, ext)))
      docs.push({ id: docs.length + 1, symbol: c.symbol ?? "", head: c.head ?? "", path: f.rel, text: c.text });
  }
  return docs;
}

/** MiniSearch configured as the oracle: the same fields, tokens, terms and boosts. */
function oracle(docs: Doc[]): MiniSearch<Doc> {
  const ms = new MiniSearch<Doc>({
    fields: [...SEARCH_FIELDS],
    storeFields: [],
    tokenize: (text, field) => fieldTokens(text, field ?? ""),
    processTerm: (t) => processTerm(t),
  });
  ms.addAll(docs);
  return ms;
}

function ours(docs: Doc[]): Bm25Index {
  const index = new Bm25Index({ fields: SEARCH_FIELDS, tokenize: fieldTokens, processTerm });
  for (const d of docs) index.add(d.id, [d.symbol, d.head, d.path, d.text]);
  return index;
}

const QUERIES = [
  "adaptive pool grow",
  "path containment predicate",
  "canary split hash trace",
  "parse error position",
  "config",
  "timer mark stage",
  "socket socket",
  "NDJSON line limit",
  "kvReuse",
  "prettier format check",
  "the",
];

/** The expected top `n`: MiniSearch's full ranking, re-ordered by (score, id) so ties compare equal. */
function expectSame(ms: MiniSearch<Doc>, index: Bm25Index, query: string, n: number): void {
  const want = ms
    .search(query, { boost: FIELD_BOOST, combineWith: "OR" })
    .map((r) => ({ id: r.id as number, score: r.score }))
    .sort((a, b) => b.score - a.score || a.id - b.id);
  const got = index.search(query, { boost: FIELD_BOOST, limit: n });
  expect(got.length).toBe(Math.min(n, want.length));
  got.forEach((hit, i) => {
    expect(hit.score).toBeCloseTo(want[i]!.score, 9);
    // The same document unless MiniSearch's score is tied (to 1e-9) with a neighbour's.
    const tied = want.filter((w) => Math.abs(w.score - want[i]!.score) < 1e-9).map((w) => w.id);
    expect(tied).toContain(hit.id);
  });
}

describe("Bm25Index", () => {
  it("ranks and scores exactly as MiniSearch does on this repository's chunks", async () => {
    const docs = await repoDocs();
    expect(docs.length).toBeGreaterThan(500);
    const ms = oracle(docs);
    const index = ours(docs);
    expect(index.size).toBe(docs.length);
    for (const q of QUERIES) expectSame(ms, index, q, 20);
    expect(index.search("the", { limit: 5 })).toEqual([]); // only stop words: no terms
  });

  it("after removals and re-adds it equals a fresh index of the surviving documents (and purges dead postings)", async () => {
    const docs = (await repoDocs()).slice(0, 3000);
    const index = ours(docs);
    // Remove two thirds: dead postings then outnumber live ones, which triggers a purge and slot renumbering.
    const kept = docs.filter((d) => d.id % 3 === 0);
    for (const d of docs) if (d.id % 3 !== 0) expect(index.remove(d.id)).toBe(true);
    expect(index.remove(999_999)).toBe(false);
    expect(index.purges).toBeGreaterThan(0);
    // Change some survivors: remove and add again under new ids, as a refresh of a changed file does.
    const changed = kept
      .filter((d) => d.id % 2 === 0)
      .map((d) => ({ ...d, id: d.id + 100_000, text: `${d.text}\nadaptive pool grow` }));
    for (const d of changed) {
      index.remove(d.id - 100_000);
      index.add(d.id, [d.symbol, d.head, d.path, d.text]);
    }
    const survivors = [...kept.filter((d) => d.id % 2 !== 0), ...changed];
    expect(index.size).toBe(survivors.length);
    const ms = oracle(survivors);
    for (const q of QUERIES) expectSame(ms, index, q, 15);
  });

  it("filters before the cut, keeps `limit`, and refuses a duplicate id", () => {
    const index = new Bm25Index({
      fields: ["text"],
      tokenize: (t) => t.split(" "),
      processTerm: (t) => t.toLowerCase() || null,
    });
    for (let i = 1; i <= 50; i++) index.add(i, [`pool ${"grow ".repeat(i % 5)}`]);
    const odd = index.search("pool grow", { limit: 7, filter: (id) => id % 2 === 1 });
    expect(odd).toHaveLength(7);
    expect(odd.every((h) => h.id % 2 === 1)).toBe(true);
    expect(odd.map((h) => h.score)).toEqual([...odd.map((h) => h.score)].sort((a, b) => b - a));
    expect(() => index.add(3, ["again"])).toThrow(/duplicate document id 3/);
    expect(index.search("absent", { limit: 3 })).toEqual([]);
  });

  it("coordination per field: a word found only in a field of weight w counts w among the matched words", () => {
    const index = new Bm25Index({
      fields: ["name", "body"],
      tokenize: (t) => t.split(" ").filter(Boolean),
      processTerm: (t) => t.toLowerCase() || null,
    });
    index.add(1, ["merge headers", ""]); // both words in the name
    index.add(2, ["merge", "headers"]); // one word only in the body
    index.add(3, ["other", "merge headers"]); // both only in the body
    index.add(4, ["merge", "merge headers"]); // merge in both fields: the name's credit counts
    const groups = [{ terms: [{ term: "merge", weight: 1 }] }, { terms: [{ term: "headers", weight: 1 }] }];
    const plain = index.searchGroups(groups, { limit: 10 });
    const weighed = index.searchGroups(groups, { limit: 10, coordination: { name: 1, body: 0.25 } });
    const score = (hits: { id: number; score: number }[], id: number): number => hits.find((h) => h.id === id)!.score;
    // All 1 (the default) is one per group: each document matched both words.
    expect(index.searchGroups(groups, { limit: 10, coordination: { name: 1, body: 1 } })).toEqual(plain);
    expect(score(weighed, 1)).toBeCloseTo(score(plain, 1), 9); // 2 → 2
    expect(score(weighed, 2)).toBeCloseTo((score(plain, 2) / 2) * 1.25, 9); // 2 → 1 + 0.25
    expect(score(weighed, 3)).toBeCloseTo((score(plain, 3) / 2) * 0.5, 9); // 2 → 0.25 + 0.25
    expect(score(weighed, 4)).toBeCloseTo((score(plain, 4) / 2) * 1.25, 9);
    expect(weighed[0]!.id).toBe(1);
  });
});
