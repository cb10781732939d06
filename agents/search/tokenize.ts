/**
 * Identifier-aware tokens (camelCase, PascalCase acronyms, snake_case, kebab-case and digit runs
 * split; the whole identifier kept too), a light stemmer, and the code synonyms a query is widened
 * with (docs/agents.md "search"). Every function here is one left-to-right pass over its input: no regular
 * expression that can backtrack, so a hostile 1 MB identifier costs linear time.
 */
import { splitIdentifier } from "../lib/code/identifier.js";

export { splitIdentifier };

const STOP = new Set([
  "a",
  "an",
  "and",
  "are",
  "as",
  "at",
  "be",
  "by",
  "for",
  "from",
  "in",
  "is",
  "it",
  "of",
  "on",
  "or",
  "the",
  "this",
  "to",
  "with",
  "const",
  "let",
  "var",
  "return",
  "import",
  "export",
  "new",
]);

function isIdentStart(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36;
}

function isIdentPart(c: number): boolean {
  return isIdentStart(c) || (c >= 48 && c <= 57);
}

/**
 * Raw tokens of a text: identifiers (ASCII letters, digits, `_`, `$`) and digit runs, each followed by its
 * parts when it has several and, from three parts on, by the identifier without its first word
 * (`isKyError` → isKyError, is, Ky, Error, KyError; `toUpperCase` → …, UpperCase): a name that qualifies
 * another name (a type guard, a getter, a conversion) also meets that name.
 */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (isIdentStart(c)) {
      let j = i + 1;
      while (j < n && isIdentPart(text.charCodeAt(j))) j++;
      const word = text.slice(i, j);
      out.push(word);
      const parts = splitIdentifier(word);
      if (parts.length > 1) for (const p of parts) out.push(p);
      if (parts.length > 2) out.push(parts.slice(1).join(""));
      i = j;
    } else if (c >= 48 && c <= 57) {
      let j = i + 1;
      while (j < n && text.charCodeAt(j) >= 48 && text.charCodeAt(j) <= 57) j++;
      out.push(text.slice(i, j));
      i = j;
    } else i++;
  }
  return out;
}

function isVowel(c: string): boolean {
  return c === "a" || c === "e" || c === "i" || c === "o" || c === "u" || c === "y";
}

/** `runn` → `run` (a doubled final consonant left by -ing/-ed), but not `call`, `pass`, `buzz`. */
function undouble(w: string): string {
  const n = w.length;
  const c = w[n - 1]!;
  return n >= 4 && c === w[n - 2] && !isVowel(c) && c !== "l" && c !== "s" && c !== "z" ? w.slice(0, -1) : w;
}

/**
 * `cancell` → `cancel`: the l that British spelling doubles before -ed and -ing after an unstressed -el
 * (`cancelled`, `labelling`, `modelled`), in a stem of six letters or more so that `spell` and `dwell` stay.
 */
function undoubleEll(w: string): string {
  return w.length >= 6 && w.endsWith("ell") ? w.slice(0, -1) : w;
}

/**
 * A light stemmer (lower-case input) so that word forms meet: plurals and third persons (`hooks`,
 * `queries`, `matches`), -ing and -ed (`merging`, `merged`, `running`), -ation (`validation` meets
 * `validate`), adverbs in -ly (`recursively` meets `recursive`), the agent noun -er of words of six letters or more (`caller` meets `call`, `parser`
 * meets `parse`; `header` meets `head` too), British spelling's doubled l (`cancelled`, `labelling`) and a final silent
 * e (`merge`, `parse`, `value`). Short words are left alone, and
 * `-ss`, `-us`, `-is` are not plurals (`process`, `status`, `analysis`). Constant work per suffix.
 */
export function stem(word: string): string {
  let w = word;
  if (w.length <= 3) return w;
  if (w.endsWith("ies") && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (
    w.endsWith("es") &&
    w.length > 4 &&
    (w.endsWith("ches") || w.endsWith("shes") || w.endsWith("xes") || w.endsWith("zes"))
  )
    w = w.slice(0, -2);
  else if (w.endsWith("s") && !w.endsWith("ss") && !w.endsWith("us") && !w.endsWith("is")) w = w.slice(0, -1);
  // An adverb meets its adjective (`recursively`, `concurrently`, `locally`, `obviously`): -ly after e, t, l
  // or s in a word of seven letters or more, so that `multiply`, `assembly`, `apply` and `reply` stay.
  if (w.length >= 7 && w.endsWith("ly") && "etls".includes(w[w.length - 3]!)) w = w.slice(0, -2);
  if (w.endsWith("ing") && w.length >= 6) w = undoubleEll(undouble(w.slice(0, -3)));
  else if (w.endsWith("ied") && w.length >= 5) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith("ed") && w.length >= 5) w = undoubleEll(undouble(w.slice(0, -2)));
  else if (w.endsWith("ation") && w.length >= 8) w = w.slice(0, -3);
  else if (w.endsWith("er") && w.length >= 6) w = undouble(w.slice(0, -2));
  if (w.endsWith("e") && w.length >= 5) w = w.slice(0, -1);
  return w;
}

/**
 * Marks the first word of a definition's name (`LEAD` + word: `mergeHeaders` → `^merge`), so that a query's
 * leading verb meets the names that start with it (docs/agents.md "search": names are verb first).
 */
export const LEAD = "^";

/**
 * Normalise one token for the index and for queries; stop words and one-letter tokens are dropped. A
 * lead-word token (`^is`) keeps its word even when that is a stop word.
 */
export function processTerm(term: string): string | null {
  const t = term.toLowerCase();
  if (t.startsWith(LEAD)) return t.length < 3 ? null : LEAD + stem(t.slice(1));
  if (t.length < 2 || STOP.has(t)) return null;
  return stem(t);
}

/**
 * Words a developer uses for the same thing in code (docs/agents.md "search"): a query word from one group
 * also looks for the others, at `SYNONYM_WEIGHT` of its own weight, and a chunk matching several
 * words of one group counts once. Kept small on purpose: each group is common programming
 * vocabulary (naming habits and abbreviations seen across codebases), not a thesaurus. A word whose
 * stem means something else in code stays out (`settings` stems to `set`). An entry of several words
 * is a phrase: where a query has its words in a row ("run them at the same time"), they stand for the
 * group's first word, and its other words at `SYNONYM_WEIGHT`.
 */
export const SYNONYMS: readonly (readonly string[])[] = [
  ["remove", "delete", "strip", "drop", "without", "trim", "clear"],
  ["add", "insert", "append", "push"],
  ["extension", "ext"],
  ["directory", "dir", "folder"],
  ["file", "path"],
  ["merge", "combine", "join", "mix"],
  ["split", "separate", "tokenize"],
  ["uppercase", "upper", "capitalize", "capital"],
  ["lowercase", "lower"],
  ["parallel", "concurrent", "concurrently", "simultaneous", "at the same time", "all at once"],
  ["serial", "sequential", "sequentially", "sequence", "one after another", "one by one"],
  ["error", "exception", "failure", "fail"],
  ["size", "length", "count", "bytes", "how many", "how big"],
  ["depth", "deep", "nesting", "recursive"],
  ["common", "shared"],
  ["check", "validate", "verify", "guard", "assert"],
  ["options", "config", "configuration", "preferences", "opts"],
  ["delay", "wait", "sleep", "timeout"],
  ["log", "debug", "trace", "print"],
  ["create", "make", "build", "factory", "init", "initialize"],
  ["flatten", "flat"],
  ["find", "search", "lookup", "locate", "get"],
  ["convert", "transform", "cast"],
  ["copy", "clone", "duplicate"],
  ["compare", "equal", "equals"],
  ["run", "call", "invoke", "execute", "exec"],
  ["send", "request", "fetch"],
  ["parse", "read", "decode"],
  ["serialize", "stringify", "encode", "format"],
  ["start", "begin"],
  ["end", "finish"],
  ["args", "arguments", "params", "parameters"],
  ["callback", "handler", "listener"],
  ["character", "char", "letter"],
  ["string", "str", "text"],
  ["number", "num", "int", "integer"],
  ["object", "obj", "record", "dict", "map"],
  ["array", "list", "arr"],
  ["message", "msg"],
  ["temporary", "temp", "tmp"],
  ["initial", "default", "defaults"],
  ["env", "environment"],
  ["util", "utils", "utility", "helper", "helpers"],
  ["source", "src"],
  ["destination", "dest", "dst", "target"],
  ["previous", "prev"],
  ["current", "cur", "curr"],
  ["position", "pos", "offset", "index", "cursor", "caret"],
  ["all", "every", "each"],
  ["contains", "inside", "within", "includes"],
  ["register", "subscribe", "attach"],
  ["unregister", "unsubscribe", "detach", "remove"],
  ["cancel", "abort"],
  ["reject", "throw", "raise"],
  ["support", "supported", "available"],
  // Common programming vocabulary and abbreviations (naming habits seen across codebases).
  ["unique", "distinct", "dedupe", "deduplicate", "uniq"],
  ["identifier", "id"],
  ["generate", "produce"],
  ["maximum", "max", "largest", "biggest", "most"],
  ["minimum", "min", "smallest", "least"],
  ["replace", "override", "overwrite", "substitute"],
  ["property", "prop", "props", "field", "attribute", "attr"],
  ["empty", "blank"],
  ["url", "uri", "href", "link", "endpoint"],
  ["date", "timestamp", "datetime"],
  ["response", "res", "resp", "reply"],
  ["request", "req"],
  ["progress", "percent", "percentage"],
  ["retry", "attempt"],
  ["stop", "halt", "terminate", "kill", "quit"],
  ["callback", "cb", "fn", "func"],
  ["emit", "dispatch", "trigger", "fire", "notify"],
  ["concat", "concatenate"],
  ["regex", "regexp", "pattern"],
  ["value", "val"],
  ["element", "elem", "item", "entry"],
  ["iterator", "iter"],
  ["buffer", "buf"],
  ["context", "ctx"],
  ["library", "lib"],
  ["package", "pkg"],
  ["millisecond", "ms", "millis"],
  ["second", "sec", "secs"],
  ["statistics", "stats", "stat", "metrics"],
  ["expression", "expr"],
  ["description", "desc"],
  ["information", "info", "details"],
  ["reference", "ref"],
  ["document", "doc"],
  ["calculate", "compute", "calc"],
  ["sort", "order", "rank"],
  ["wrap", "wrapper", "decorate"],
  ["ignore", "skip"],
  ["close", "shutdown", "dispose", "destroy", "teardown"],
  ["write", "save", "store", "persist"],
  ["hash", "digest", "checksum"],
  ["random", "rand", "randomize"],
  ["escape", "sanitize", "quote"],
  ["cache", "memo", "memoize"],
  ["lock", "mutex"],
  ["total", "sum", "overall"],
  ["average", "mean", "avg"],
  ["word", "token", "term"],
  ["whitespace", "space", "blank"],
  ["indent", "indentation"],
  ["deprecated", "obsolete", "legacy"],
  ["warn", "warning"],
  ["separator", "delimiter", "sep", "delim"],
  ["authentication", "auth", "authorization", "credentials"],
  ["password", "passwd", "secret"],
  ["connection", "conn"],
  ["database", "db"],
  ["process", "proc"],
  ["command", "cmd"],
  ["query", "search"],
  ["version", "ver"],
  ["count", "counter", "tally"],
  ["timeout", "timed out", "time out", "takes too long", "too long"],
];

/** A synonym counts this share of the query word it stands for (the word itself counts 1). */
export const SYNONYM_WEIGHT = 0.5;

/**
 * Auxiliary verbs and subject pronouns of a question ("how deep do brackets nest", "can it stream"): they
 * carry the question, not its subject, so a query does not search for them (the index keeps them).
 */
const QUERY_FILLER = new Set([
  "do",
  "does",
  "did",
  "can",
  "could",
  "should",
  "would",
  "will",
  "shall",
  "am",
  "we",
  "you",
  "my",
  "me",
  "our",
  "your",
  "i",
]);

/**
 * Verbs that, after an auxiliary and a subject inside a question ("what error do I get when …", "which
 * function should I use to …"), say that something is wanted, not what: no query word there.
 */
const LIGHT_VERBS = new Set(["get", "use", "need", "want", "call", "pick", "choose"]);
/** The auxiliaries and subjects of a question frame (`questionFrame`) and of a light verb (`LIGHT_VERBS`). */
const FRAME_AUX = new Set(["do", "does", "did", "can", "could", "should", "would", "will", "shall", "is", "are", "am"]);
const FRAME_SUBJECT = new Set(["i", "we", "you", "one", "to"]);

/** A query's terms: its tokens processed, stop words, question fillers and one-letter tokens dropped. */
function queryTerms(text: string): string[] {
  const terms = (tokens: string[]): string[] => tokens.map((t) => processTerm(t)).filter((t) => t !== null);
  const all = tokenize(text);
  const lower = all.map((t) => t.toLowerCase());
  const meant = terms(
    all.filter(
      (_t, i) =>
        !QUERY_FILLER.has(lower[i]!) &&
        !(i >= 2 && LIGHT_VERBS.has(lower[i]!) && FRAME_SUBJECT.has(lower[i - 1]!) && FRAME_AUX.has(lower[i - 2]!)),
    ),
  );
  // A query of fillers alone ("do") is what it says.
  return meant.length > 0 ? meant : terms(all);
}

const SYNONYMS_BY_TERM: Map<string, string[]> = (() => {
  const map = new Map<string, string[]>();
  for (const group of SYNONYMS) {
    const words = group.filter((w) => !w.includes(" "));
    const terms = [...new Set(words.map((w) => processTerm(w)).filter((t) => t !== null))];
    for (const t of terms) map.set(t, [...new Set([...(map.get(t) ?? []), ...terms.filter((x) => x !== t)])]);
  }
  return map;
})();

/** The phrases of the synonym table as their terms ("at the same time" → same, time), with the group's terms. */
const PHRASES: { terms: string[]; group: string[] }[] = SYNONYMS.flatMap((group) => {
  const words = [...new Set(group.filter((w) => !w.includes(" ")).map((w) => processTerm(w)))].filter(
    (t) => t !== null,
  );
  return group
    .filter((w) => w.includes(" "))
    .map((w) => ({ terms: queryTerms(w), group: words }))
    .filter((p) => p.terms.length >= 2);
});

/**
 * Leading words of a question answered yes or no ("is this error an HTTP error", "does it have …"): such
 * a query asks for a predicate, whose name starts with one of `PREDICATE_LEADS`.
 */
const QUESTION_WORDS = new Set(["is", "are", "does", "do", "has", "have", "can", "should", "whether"]);
export const PREDICATE_LEADS = ["is", "has", "can", "should", "supports"];
/**
 * Words that open an open question ("how deep do brackets nest", "which function is the cursor in"):
 * they say what kind of answer is wanted, not what it is about, so they are no query word and no lead
 * (unless the query has nothing else). "how many"/"how big" stay phrases of the synonym table.
 */
const WH_WORDS = new Set(["how", "what", "which", "where", "when", "why", "who", "whose"]);
const WH_TERMS = new Set([...WH_WORDS].map((w) => processTerm(w)).filter((t) => t !== null));

/**
 * The words that frame a developer's question around what it asks ("how do I", "how can we", "how to",
 * "where do I", "is there a way to", "I want to"): they are no query word. After a frame that ends in
 * a subject or `to` ("how do I parse …"), the next word is the action asked for: the query's lead.
 * "where is the config read" has a frame ("where is") but no lead: its next word names a thing.
 */
const FRAME_OPENERS: readonly (readonly string[])[] = [
  ["is", "there", "a", "way", "to"],
  ["is", "it", "possible", "to"],
  ["i", "want", "to"],
  ["i", "need", "to"],
  ["i", "would", "like", "to"],
  ["we", "need", "to"],
  ["help", "me"],
  ["please"],
];

/**
 * Split a query into its question frame and the rest (`rest`, the text searched for) and, when the frame
 * ends in a subject or `to`, the word after it (`lead`). A query with no frame is all `rest`.
 */
export function questionFrame(query: string): { rest: string; lead?: string } {
  const words: { w: string; end: number }[] = [];
  const re = /[A-Za-z']+/g;
  let m: RegExpExecArray | null;
  // Only the first few words can be a frame.
  while (words.length < 7 && (m = re.exec(query)) !== null) words.push({ w: m[0].toLowerCase(), end: re.lastIndex });
  let n = 0;
  let subject = false;
  const opener = FRAME_OPENERS.find((o) => o.length <= words.length && o.every((w, k) => words[k]!.w === w));
  if (opener) {
    n = opener.length;
    subject = true;
  } else if (words.length > 0 && WH_WORDS.has(words[0]!.w)) {
    n = 1;
    if (n < words.length && FRAME_AUX.has(words[n]!.w)) n++;
    if (n < words.length && FRAME_SUBJECT.has(words[n]!.w)) {
      n++;
      subject = true;
    } else if (n === 1) return { rest: query }; // "how many", "which function …": no frame
  } else return { rest: query };
  if (n >= words.length) return { rest: query }; // nothing after the frame: the query is what it says
  const rest = query.slice(words[n - 1]!.end);
  const next = words[n]!.w;
  return subject && processTerm(next) !== null ? { rest, lead: next } : { rest };
}

/**
 * The weight of a query's first word as the first word of a name (its synonyms at `SYNONYM_WEIGHT` of
 * it); the lead group does not count as a matched word.
 */
export const LEAD_WEIGHT = 2;

/** One word of a query: its term and the synonyms that may stand in for it, each with a weight. */
export interface QueryGroup {
  terms: { term: string; weight: number }[];
  /** False for a group that adds to a chunk's score without counting as a matched query word. */
  coordinate?: boolean;
}

/**
 * A query's words as groups for `Bm25Index.searchGroups`: one group per distinct term (weighted by
 * how often it occurs), widened with the term's synonyms at `SYNONYM_WEIGHT`, unless the query
 * itself has that synonym; a phrase of the synonym table is one group. Then one group, which adds to
 * the score but does not count as a matched word (`coordinate: false`), for the query's first word as
 * the first word of a name (`LEAD`): the word and its synonyms, or the predicate prefixes for a yes/no
 * question, and for a check ("check if", "validate") too, at `SYNONYM_WEIGHT`.
 */
export function queryGroups(query: string, synonyms = true): QueryGroup[] {
  const frame = questionFrame(query);
  const seq = queryTerms(frame.rest);
  const groups: QueryGroup[] = [];
  const counts = new Map<string, number>();
  for (let i = 0; i < seq.length; i++) {
    const phrase = synonyms
      ? PHRASES.find((p) => p.terms.length <= seq.length - i && p.terms.every((t, k) => seq[i + k] === t))
      : undefined;
    if (phrase) {
      groups.push({
        terms: phrase.group.map((term, k) => ({ term, weight: k === 0 ? 1 : SYNONYM_WEIGHT })),
      });
      i += phrase.terms.length - 1;
      continue;
    }
    if (WH_TERMS.has(seq[i]!) && seq.some((t) => !WH_TERMS.has(t))) continue;
    counts.set(seq[i]!, (counts.get(seq[i]!) ?? 0) + 1);
  }
  for (const [term, n] of counts)
    groups.push({
      terms: [
        { term, weight: n },
        ...(synonyms ? (SYNONYMS_BY_TERM.get(term) ?? []) : [])
          .filter((s) => !counts.has(s))
          .map((s) => ({ term: s, weight: n * SYNONYM_WEIGHT })),
      ],
    });
  const first = frame.lead ?? tokenize(query)[0]?.toLowerCase();
  if (
    synonyms &&
    groups.length > 0 &&
    first !== undefined &&
    !WH_WORDS.has(first) &&
    (QUESTION_WORDS.has(first) || processTerm(first) !== null)
  ) {
    const lead = QUESTION_WORDS.has(first)
      ? PREDICATE_LEADS.map((w) => ({ term: LEAD + stem(w), weight: LEAD_WEIGHT }))
      : [
          { term: LEAD + stem(first), weight: LEAD_WEIGHT },
          ...(SYNONYMS_BY_TERM.get(stem(first)) ?? []).map((s) => ({
            term: LEAD + s,
            weight: LEAD_WEIGHT * SYNONYM_WEIGHT,
          })),
          ...(SYNONYMS_BY_TERM.get(stem(first))?.includes("check") || stem(first) === "check"
            ? PREDICATE_LEADS.map((w) => ({ term: LEAD + stem(w), weight: LEAD_WEIGHT * SYNONYM_WEIGHT }))
            : []),
        ];
    groups.push({ terms: lead, coordinate: false });
  }
  return groups;
}
