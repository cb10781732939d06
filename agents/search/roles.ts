/**
 * Signature roles (docs/agents.md "search"): near-identical sibling definitions share a query's words
 * (`offsetAt` and `positionAt`), but not the side those words stand on. A function's output is its
 * name's head noun, its verb and its return type; its input is its parameters (and, in `functionAtOffset`,
 * the words after the name's preposition). A query says the same by rule: what follows
 * from/of/for/given/with/by/in/at/on is input, the rest output; in "convert X to Y" X is input and Y output.
 * Among the best results, which already matched the words, a candidate gains a little per query word
 * found on the side the query puts it, so `positionAt(offset)` rises above `offsetAt(position)` for
 * "position of … an offset".
 */
import { processTerm, questionFrame, splitIdentifier } from "./tokenize.js";

/** Words that put what follows them on the input side, in a query and inside a name (`functionAtOffset`). */
const INPUT_PREPOSITIONS = new Set(["from", "of", "for", "given", "with", "by", "in", "at", "on"]);
/** Type names that say nothing about what a value is. */
const PLAIN_TYPES = new Set([
  "string",
  "number",
  "boolean",
  "unknown",
  "any",
  "void",
  "undefined",
  "null",
  "never",
  "object",
  "promise",
  "readonly",
  "array",
  "record",
  "partial",
  "true",
  "false",
  "bigint",
]);

export interface Roles {
  output: Set<string>;
  input: Set<string>;
  /** A name's first word when the name has more (its verb): it may agree with the query's output, never cross. */
  verb?: string;
}

function terms(words: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const w of words) {
    const t = processTerm(w);
    if (t !== null) out.add(t);
  }
  return out;
}

/**
 * A query's output and input words (stemmed terms), or undefined when it names no input side. Words
 * before the first input preposition are output, words after it input; "X to Y" (a `to` that is not the
 * query's first word) makes X input and Y output.
 */
export function queryRoles(query: string): Roles | undefined {
  const words = (
    questionFrame(query)
      .rest.toLowerCase()
      .match(/[a-z][a-z0-9]*/g) ?? []
  ).flatMap((w) => splitIdentifier(w).map((p) => p.toLowerCase()));
  const output: string[] = [];
  const input: string[] = [];
  let side: string[] = output;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (INPUT_PREPOSITIONS.has(w)) side = input;
    else if (w === "to" && i > 1 && side === output) {
      // "convert X to Y": X (after the verb) is input.
      input.push(...output.splice(1));
      side = output;
    } else side.push(w);
  }
  if (input.length === 0) return undefined;
  return { output: terms(output), input: terms(input) };
}

/** The text between the bracket at `open` and its match, or undefined when it does not close. */
function bracketed(text: string, open: number): { inner: string; end: number } | undefined {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return { inner: text.slice(open + 1, i), end: i };
  }
  return undefined;
}

/**
 * A definition's roles from its name and head (`Chunk.head`: description, then declaration lines), or
 * undefined when the head declares no parameter list after the name.
 */
export function signatureRoles(symbol: string, head: string): Roles | undefined {
  const name = symbol.replace(/^#/, "");
  let at = head.lastIndexOf(name);
  while (at >= 0) {
    const after = head.slice(at + name.length, at + name.length + 80);
    const m = /^\??\s*(?:<[^>]*>)?\s*(?:[:=]\s*(?:async\s*)?(?:function\s*)?)?\(/.exec(after);
    if (m && (at === 0 || !/[\w$]/.test(head[at - 1]!))) {
      const open = at + name.length + m[0].length - 1;
      const params = bracketed(head, open);
      if (!params) return undefined;
      const rest = head.slice(params.end + 1);
      const ret = /^\s*(?::|=>)\s*([^{=;\n]*)/.exec(rest)?.[1] ?? "";
      return rolesOf(name, params.inner, ret);
    }
    at = at === 0 ? -1 : head.lastIndexOf(name, at - 1);
  }
  return undefined;
}

function identifiers(text: string): string[] {
  return (text.match(/[A-Za-z_$][\w$]*/g) ?? []).flatMap((id) => splitIdentifier(id)).map((w) => w.toLowerCase());
}

function rolesOf(name: string, params: string, returnType: string): Roles {
  const parts = splitIdentifier(name).map((w) => w.toLowerCase());
  const output: string[] = [];
  let verb: string | null = null;
  const input = identifiers(params).filter((w) => !PLAIN_TYPES.has(w));
  if (parts[0] === "to" || parts[0] === "as") output.push(...parts.slice(1));
  else {
    const prep = parts.findIndex((w, i) => i > 0 && INPUT_PREPOSITIONS.has(w));
    const before = prep > 0 ? parts.slice(0, prep) : parts;
    if (prep > 0) input.push(...parts.slice(prep + 1));
    output.push(before[before.length - 1]!);
    if (before.length > 1) verb = processTerm(before[0]!);
  }
  output.push(...identifiers(returnType).filter((w) => !PLAIN_TYPES.has(w)));
  return verb === null
    ? { output: terms(output), input: terms(input) }
    : { output: terms(output), input: terms(input), verb };
}

/**
 * Lift per query word on the side the candidate has it (output: head noun, return type or verb; input:
 * parameters), up to three words. An input word counts half: parameter lists are long and share words
 * across siblings. A crossed word is not penalised: on the dev, holdout and fresh phrasings a cut per
 * crossed word lost more than it won (docs/agents.md, search).
 */
export const ROLE_AGREE = 0.1;
const INPUT_AGREE = 0.5;

/** The factor a candidate's score is multiplied by: 1 when no query word stands on the candidate's side. */
export function roleFactor(q: Roles, s: Roles): number {
  let agree = 0;
  for (const t of q.output) if (s.output.has(t) || t === s.verb) agree++;
  for (const t of q.input) if (s.input.has(t)) agree += INPUT_AGREE;
  return 1 + ROLE_AGREE * Math.min(agree, 3);
}
