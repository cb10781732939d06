/**
 * A compact in-memory BM25 index with per-field boosts: MiniSearch's scoring (same formula, same
 * parameters, same field-length and coordination rules), stored in typed arrays so that a query
 * costs far less per posting than MiniSearch's objects.
 *
 * Why not MiniSearch itself: on a large workspace a query of two common words (tens of thousands of
 * postings) overran the query budget in MiniSearch and in Orama (docs/performance.md, "Parsing
 * speed"); FlexSearch is fast but ranks by term position without BM25 and returns no scores. `test/agents/search/bm25.test.ts` checks this index against MiniSearch
 * (a dev dependency kept as the oracle): same hits, same scores.
 *
 * Scoring, per query term t and field f with boost w_f:
 *   idf = ln(1 + (N - n_f + 0.5) / (n_f + 0.5))   (N live documents, n_f of them with t in f)
 *   s  += w_f · idf · (d + tf·(k+1) / (tf + k·(1 - b + b·len_f / avglen_f)))
 * and the document's total is multiplied by the number of distinct query terms it matched. `searchGroups`
 * generalises a term to a group of weighted alternatives (a word and its synonyms): per group a document
 * scores its best alternative, and matching any alternative counts the group once (a group marked
 * `coordinate: false` adds its score without being counted).
 * `len_f` is the number of distinct raw tokens of the field (MiniSearch's definition).
 * Removal marks a document dead and fixes the counts at once; dead postings are purged when they
 * outnumber the live ones.
 */

export interface Bm25Params {
  k: number;
  b: number;
  d: number;
}

/** MiniSearch's defaults. */
export const DEFAULT_BM25: Bm25Params = { k: 1.2, b: 0.7, d: 0.5 };

export interface Bm25Config {
  fields: readonly string[];
  /** Raw tokens of a field's text. */
  tokenize: (text: string, field: string) => string[];
  /** A raw token's index term, or null to drop it. */
  processTerm: (token: string) => string | null;
  bm25?: Bm25Params;
}

export interface Bm25Hit {
  id: number;
  score: number;
}

/** Alternatives of a query word (its synonyms) present in more than this share of the documents are not scored. */
export const MAX_ALTERNATIVE_SHARE = 0.25;

/** One query word: alternative index terms (the word's own term and its synonyms), each with its weight. */
export interface Bm25QueryGroup {
  terms: readonly { term: string; weight: number }[];
  /** False: the group adds to a document's score but is not counted among its matched groups (default true). */
  coordinate?: boolean;
}

export interface Bm25SearchOptions {
  /** Boost per field name; a missing field counts 1. */
  boost?: Readonly<Record<string, number>>;
  /**
   * How much a group matched in a field counts among a document's matched groups (0-1 per field name; a
   * missing field counts 1): a group counts the most of the fields it was found in. All 1 (the default) is
   * MiniSearch's coordination, one per group.
   */
  coordination?: Readonly<Record<string, number>>;
  limit: number;
  filter?: (id: number) => boolean;
}

/** The postings of one term: document slots and, per posting, one term frequency per field. */
interface Postings {
  slots: Int32Array;
  tf: Uint16Array;
  length: number;
  /** Live documents containing the term, per field. */
  df: Int32Array;
}

function grow<T extends Int32Array | Uint16Array | Float64Array | Uint8Array | Uint32Array>(a: T, min: number): T {
  if (a.length >= min) return a;
  let n = Math.max(4, a.length);
  while (n < min) n *= 2;
  const b = new (a.constructor as new (n: number) => T)(n);
  b.set(a);
  return b;
}

export class Bm25Index {
  private readonly nf: number;
  private readonly params: Bm25Params;
  private readonly terms = new Map<string, Postings>();
  private readonly slotOf = new Map<number, number>();
  private ids = new Int32Array(0);
  private alive = new Uint8Array(0);
  private fieldLen = new Uint16Array(0);
  private docTerms: (Postings[] | undefined)[] = [];
  private nextSlot = 0;
  private live = 0;
  private readonly lenSum: Float64Array;
  private livePostings = 0;
  private deadPostings = 0;
  // Per-query scratch, indexed by slot; `stamp` tells which entries belong to the current query.
  private score = new Float64Array(0);
  /** The document's best score among the current group's terms (added to `score` when the group is done). */
  private best = new Float64Array(0);
  /** k·(1 - b + b·len_f / avglen_f) per slot and field, recomputed on the first query after a change. */
  private kNorm = new Float64Array(0);
  private normsStale = true;
  private matched = new Float64Array(0);
  /** The current group's coordination credit for the document (the most of the fields it matched in). */
  private credit = new Float64Array(0);
  private lastTerm = new Int32Array(0);
  private stamp = new Uint32Array(0);
  private query = 0;
  /** How many times dead postings were purged (for tests and stats). */
  purges = 0;

  constructor(private readonly config: Bm25Config) {
    this.nf = config.fields.length;
    this.params = config.bm25 ?? DEFAULT_BM25;
    this.lenSum = new Float64Array(this.nf);
  }

  /** Live documents. */
  get size(): number {
    return this.live;
  }

  /** Distinct terms (including ones only dead documents still hold, until the next purge). */
  get termCount(): number {
    return this.terms.size;
  }

  has(id: number): boolean {
    return this.slotOf.has(id);
  }

  /** Index a document given its field texts in `fields` order. A duplicate id is an error. */
  add(id: number, texts: readonly string[]): void {
    if (this.slotOf.has(id)) throw new Error(`bm25: duplicate document id ${id}`);
    const nf = this.nf;
    const slot = this.nextSlot++;
    this.ensureSlots(slot + 1);
    this.slotOf.set(id, slot);
    this.ids[slot] = id;
    this.alive[slot] = 1;
    this.live++;
    const counts = new Map<string, Uint16Array>();
    for (let f = 0; f < nf; f++) {
      const tokens = this.config.tokenize(texts[f] ?? "", this.config.fields[f]!);
      const len = Math.min(65_535, new Set(tokens).size);
      this.fieldLen[slot * nf + f] = len;
      this.lenSum[f] = this.lenSum[f]! + len;
      for (const token of tokens) {
        const term = this.config.processTerm(token);
        if (!term) continue;
        let c = counts.get(term);
        if (!c) counts.set(term, (c = new Uint16Array(nf)));
        if (c[f]! < 65_535) c[f]!++;
      }
    }
    const held: Postings[] = [];
    for (const [term, c] of counts) {
      let p = this.terms.get(term);
      if (!p)
        this.terms.set(
          term,
          (p = { slots: new Int32Array(2), tf: new Uint16Array(2 * nf), length: 0, df: new Int32Array(nf) }),
        );
      const i = p.length++;
      p.slots = grow(p.slots, p.length);
      p.tf = grow(p.tf, p.length * nf);
      p.slots[i] = slot;
      for (let f = 0; f < nf; f++) {
        p.tf[i * nf + f] = c[f]!;
        if (c[f]! > 0) p.df[f]!++;
      }
      held.push(p);
    }
    this.docTerms[slot] = held;
    this.livePostings += held.length;
    this.normsStale = true;
  }

  /** Remove a document; false when the id is not indexed. */
  remove(id: number): boolean {
    const slot = this.slotOf.get(id);
    if (slot === undefined) return false;
    const nf = this.nf;
    this.slotOf.delete(id);
    this.alive[slot] = 0;
    this.live--;
    for (let f = 0; f < nf; f++) this.lenSum[f] = this.lenSum[f]! - this.fieldLen[slot * nf + f]!;
    const held = this.docTerms[slot] ?? [];
    for (const p of held) {
      // Postings are appended in slot order, so the document's posting is found by binary search.
      let lo = 0;
      let hi = p.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (p.slots[mid]! < slot) lo = mid + 1;
        else hi = mid;
      }
      for (let f = 0; f < nf; f++) if (p.tf[lo * nf + f]! > 0) p.df[f]!--;
    }
    this.docTerms[slot] = undefined;
    this.normsStale = true;
    this.livePostings -= held.length;
    this.deadPostings += held.length;
    if (this.deadPostings > 1024 && this.deadPostings > this.livePostings) this.purge();
    return true;
  }

  /** The best `limit` documents for the query, highest score first (ties: lower id first). */
  search(query: string, options: Bm25SearchOptions): Bm25Hit[] {
    // Query terms as MiniSearch forms them: tokenized without a field, processed; a repeated term counts again.
    const weights = new Map<string, number>();
    for (const token of this.config.tokenize(query, "")) {
      const term = this.config.processTerm(token);
      if (term) weights.set(term, (weights.get(term) ?? 0) + 1);
    }
    return this.searchGroups(
      [...weights].map(([term, weight]) => ({ terms: [{ term, weight }] })),
      options,
    );
  }

  /**
   * The best `limit` documents for query words given as groups of alternative terms (a word and its
   * synonyms, each with its weight). A document scores, per group, its best alternative, and its total
   * is multiplied by the number of groups it matched; with one term per group this is `search`. The first
   * term of a group is the query's word; the others are skipped when very common (`MAX_ALTERNATIVE_SHARE`).
   */
  searchGroups(groups: readonly Bm25QueryGroup[], options: Bm25SearchOptions): Bm25Hit[] {
    const { k, d } = this.params;
    const k1 = k + 1;
    const nf = this.nf;
    const boosts = this.config.fields.map((f) => options.boost?.[f] ?? 1);
    const coord = this.config.fields.map((f) => options.coordination?.[f] ?? 1);
    if (groups.length === 0 || this.live === 0 || options.limit <= 0) return [];
    const q = ++this.query;
    if (q === 0xffffffff) {
      this.stamp.fill(0);
      this.query = 1;
    }
    const stamp = this.query;
    const touched: number[] = [];
    if (this.normsStale) this.computeNorms();
    const kNorm = this.kNorm;
    const idf = new Float64Array(nf);
    let groupNo = 0;
    for (const group of groups) {
      groupNo++;
      const counts = group.coordinate === false ? 0 : 1;
      for (let ti = 0; ti < group.terms.length; ti++) {
        const { term, weight } = group.terms[ti]!;
        const p = this.terms.get(term);
        // An alternative found in more than MAX_ALTERNATIVE_SHARE of the documents weighs little (low idf)
        // and costs the most postings: skipped. The group's first term (the query's own word) never is.
        if (!p || (ti > 0 && p.length > this.live * MAX_ALTERNATIVE_SHARE)) continue;
        for (let f = 0; f < nf; f++) {
          const n = p.df[f]!;
          idf[f] = n > 0 ? weight * boosts[f]! * Math.log(1 + (this.live - n + 0.5) / (n + 0.5)) : 0;
        }
        const { slots, tf } = p;
        for (let i = 0; i < p.length; i++) {
          const slot = slots[i]!;
          if (this.alive[slot] === 0) continue;
          let s = 0;
          let c = 0;
          for (let f = 0; f < nf; f++) {
            const t = tf[i * nf + f]!;
            if (t === 0) continue;
            s += idf[f]! * (d + (t * k1) / (t + kNorm[slot * nf + f]!));
            if (coord[f]! > c) c = coord[f]!;
          }
          c *= counts;
          if (this.stamp[slot] !== stamp) {
            this.stamp[slot] = stamp;
            this.score[slot] = 0;
            this.best[slot] = s;
            this.matched[slot] = 0;
            this.credit[slot] = c;
            this.lastTerm[slot] = groupNo;
            touched.push(slot);
          } else if (this.lastTerm[slot] !== groupNo) {
            // The first posting of this group for the document: the previous group's best is final.
            this.score[slot] = this.score[slot]! + this.best[slot]!;
            this.matched[slot] = this.matched[slot]! + this.credit[slot]!;
            this.best[slot] = s;
            this.credit[slot] = c;
            this.lastTerm[slot] = groupNo;
          } else {
            if (s > this.best[slot]!) this.best[slot] = s;
            if (c > this.credit[slot]!) this.credit[slot] = c;
          }
        }
      }
    }
    // Keep the best `limit` in a small sorted array: most candidates fail the first comparison.
    const top: Bm25Hit[] = [];
    const better = (a: Bm25Hit, s: number, id: number): boolean => s > a.score || (s === a.score && id < a.id);
    for (const slot of touched) {
      const score = (this.score[slot]! + this.best[slot]!) * (this.matched[slot]! + this.credit[slot]!);
      if (score === 0) continue; // matched only groups that do not count
      const id = this.ids[slot]!;
      if (top.length === options.limit && !better(top[top.length - 1]!, score, id)) continue;
      if (options.filter && !options.filter(id)) continue;
      let at = top.length;
      while (at > 0 && better(top[at - 1]!, score, id)) at--;
      top.splice(at, 0, { id, score });
      if (top.length > options.limit) top.pop();
    }
    return top;
  }

  /** The length normalisation of every slot and field for the current average field lengths. */
  private computeNorms(): void {
    const { k, b } = this.params;
    const nf = this.nf;
    this.kNorm = grow(this.kNorm, this.nextSlot * nf);
    for (let f = 0; f < nf; f++) {
      const avg = this.lenSum[f]! / this.live;
      for (let slot = 0; slot < this.nextSlot; slot++)
        this.kNorm[slot * nf + f] = k * (1 - b + (b * this.fieldLen[slot * nf + f]!) / avg);
    }
    this.normsStale = false;
  }

  private ensureSlots(n: number): void {
    this.ids = grow(this.ids, n);
    this.alive = grow(this.alive, n);
    this.fieldLen = grow(this.fieldLen, n * this.nf);
    this.score = grow(this.score, n);
    this.best = grow(this.best, n);
    this.matched = grow(this.matched, n);
    this.credit = grow(this.credit, n);
    this.lastTerm = grow(this.lastTerm, n);
    this.stamp = grow(this.stamp, n);
  }

  /** Drop dead postings and renumber slots densely (O(postings); runs when dead postings outnumber live ones). */
  private purge(): void {
    this.purges++;
    const nf = this.nf;
    const remap = new Int32Array(this.nextSlot).fill(-1);
    let next = 0;
    for (let s = 0; s < this.nextSlot; s++) if (this.alive[s]) remap[s] = next++;
    const ids = new Int32Array(Math.max(4, next));
    const alive = new Uint8Array(ids.length);
    const fieldLen = new Uint16Array(ids.length * nf);
    const docTerms: (Postings[] | undefined)[] = new Array<Postings[] | undefined>(next);
    for (let s = 0; s < this.nextSlot; s++) {
      const to = remap[s]!;
      if (to < 0) continue;
      ids[to] = this.ids[s]!;
      alive[to] = 1;
      fieldLen.set(this.fieldLen.subarray(s * nf, s * nf + nf), to * nf);
      docTerms[to] = this.docTerms[s];
      this.slotOf.set(this.ids[s]!, to);
    }
    for (const [term, p] of this.terms) {
      let w = 0;
      for (let i = 0; i < p.length; i++) {
        const to = remap[p.slots[i]!]!;
        if (to < 0) continue;
        p.slots[w] = to;
        p.tf.copyWithin(w * nf, i * nf, i * nf + nf);
        w++;
      }
      if (w === 0) {
        this.terms.delete(term);
        continue;
      }
      p.length = w;
    }
    this.ids = ids;
    this.alive = alive;
    this.fieldLen = fieldLen;
    this.docTerms = docTerms;
    this.nextSlot = next;
    this.deadPostings = 0;
    this.score = new Float64Array(ids.length);
    this.best = new Float64Array(ids.length);
    this.normsStale = true;
    this.matched = new Float64Array(ids.length);
    this.credit = new Float64Array(ids.length);
    this.lastTerm = new Int32Array(ids.length);
    this.stamp = new Uint32Array(ids.length);
    this.query = 0;
  }
}
