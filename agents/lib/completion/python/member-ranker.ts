/**
 * The learned ranking of Python members (docs/agents.md, "Python completion"): each candidate after
 * `x.` is described by a few numbers (where it comes from, how the buffer and the workspace use it,
 * how its name fits where the value goes, what kind of member it is) and scored by a weighted sum.
 * The weights (member-weights.ts) are fitted on the corpus by bench/eval/train-python-ranker.ts
 * (`npm run train:python-ranker`), one set for `self.` and one for every other receiver: what makes a
 * class's own member likely differs from what makes a module's or another object's likely.
 */
import { PYTHON_MEMBER_WEIGHTS } from "./member-weights.js";

/** The features, in the order of a feature vector and of the weights. */
export const MEMBER_FEATURES = [
  /** How the label matches the typed prefix (matchScore / 100; 0 with no prefix). */
  "match",
  /** Found by the syntactic engine among the receiver's members (its class or module). */
  "declared",
  /** How many bases away it is declared (0 for the class itself, at most 3). */
  "inherited",
  /** Offered by the checker. */
  "typed",
  /** The checker answered and did not offer it. */
  "checker_missing",
  /** Used after any receiver in the buffer, by the receiver the buffer types before this one only. */
  "buffer_only",
  /** log2(1 + its occurrences in the buffer). */
  "buffer_count",
  /** log2(1 + its uses after the same receiver word in the buffer). */
  "buffer_pair",
  /** log2(1 + its uses after other receivers in the buffer). */
  "buffer_other",
  /** 1 / (1 + distance to its nearest occurrence / 300 characters); 0 when none is near. */
  "near",
  /** log2(1 + its uses after a receiver of the same word in the workspace's other files). */
  "workspace_pair",
  /** log2(1 + its uses after any receiver in the workspace's other files). */
  "workspace_any",
  /** The standard library's use of the name (scaled), for members from the stubs or the checker. */
  "prior",
  /** Named like the variable, attribute or keyword its value goes to on the cursor's line. */
  "named_target",
  /** Named like the function the cursor is in (weighted: fully in a test or `return`). */
  "named_function",
  /** Named like the receiver (`parser.parse`). */
  "named_receiver",
  /** The method being written (`self.` inside it). */
  "current_method",
  /** `_private` (not a dunder). */
  "private",
  /** `_private` after `self.`: the class's own state. */
  "private_own",
  /** `__dunder__`. */
  "dunder",
  /** A method or function. */
  "method",
  /** A class. */
  "class",
  /** An UPPER_CASE constant. */
  "constant",
  /** Defined or used in the class above the cursor (`self.` only). */
  "above",
  /** Known only from the class as last saved: defined below the cursor (`self.` only). */
  "below_only",
  /** The member the same receiver was last used with in the buffer. */
  "last_on_receiver",
  /** log2(1 + the number of candidates) when it is a declared member: the prior of one among many. */
  "many",
  /** log2(1 + how often the buffer uses it on the same receiver right after the receiver's last member). */
  "bigram",
  /** log2(1 + its uses on the same receiver in the enclosing function above the cursor). */
  "in_function",
  /** Named like the receiver's last member in the buffer (`_validate_iat` after `_validate_nbf`). */
  "like_last",
  /** Named like the words of the cursor's line and the two above it, strings included (`if "iat" in …:`). */
  "named_context",
  /** Named in a docstring or comment of the enclosing function above the cursor. */
  "in_doc",
  /** A declared method the buffer never uses after a dot: a first call. */
  "unused_method",
  /** A method where the expression starts a statement (`self.` alone on its line: a call). */
  "statement_method",
  /** A method in a condition (`if`, `while`, `and`, `not`): an attribute is likelier there. */
  "condition_method",
  /** log2(1 + its uses on a receiver of the same word right after the receiver's last member, in the workspace's other files). */
  "workspace_bigram",
  /** 1 / (1 + lines between its definition in the class being written and the cursor / 30) (`self.` only). */
  "defined_near",
  /** How well the class it comes from fits a receiver of unknown type, by name or members used (0 to 1). */
  "lookalike",
  /** A method where the expression is a value being assigned (`x = self.`): a call's result or an attribute. */
  "assign_method",
  /** A method where the expression is a call's argument (`f(a, self.`). */
  "argument_method",
  /** A method where the expression is returned (`return self.`). */
  "return_method",
  /** A method where the expression is iterated (`for x in self.`). */
  "iterate_method",
  /** Named like a type (`Optional`, a class) where an annotation is written (`x: t.`, `-> t.`). */
  "annotation_type",
  /** Named like a type (`Optional`, a class) where a value is written (`x = t.`): `cast` likelier there. */
  "value_type",
  /** Used on the same receiver earlier on the cursor's line (`t.Optional[t.`). */
  "same_line",
  /** A parameter of the enclosing function not yet used on the receiver there (`self.name = name` in `__init__`). */
  "parameter",
  /** The string method a literal's text calls for: `format` on a text with `{}`, `join` on a short separator. */
  "literal_fit",
] as const;

export type MemberFeature = (typeof MEMBER_FEATURES)[number];

/** Which weights apply: `self.` (and `cls.`), or any other receiver. */
export type MemberGroup = "self" | "other";

export interface MemberWeights {
  features: readonly string[];
  self: readonly number[];
  other: readonly number[];
}

/** A feature vector with every feature 0. */
export function emptyFeatures(): Record<MemberFeature, number> {
  return Object.fromEntries(MEMBER_FEATURES.map((f) => [f, 0])) as Record<MemberFeature, number>;
}

/** The weights by feature name, checked against the features this code computes. */
function weightsFor(w: MemberWeights, group: MemberGroup): Float64Array {
  const out = new Float64Array(MEMBER_FEATURES.length);
  const by = new Map(w.features.map((f, i) => [f, w[group][i] ?? 0]));
  MEMBER_FEATURES.forEach((f, i) => (out[i] = by.get(f) ?? 0));
  return out;
}

/**
 * Taken off a dunder's score past what its weight says: the positions trained on never have one (a
 * dunder is not what one types after a dot), so its weight is only as low as the L2 penalty allows,
 * and a dunder the standard library uses often (`__init__`, `__doc__`) would come up among the names.
 */
export const DUNDER_PENALTY = 10;

const compiled = new WeakMap<MemberWeights, Record<MemberGroup, Float64Array>>();

/** A candidate's score: the weighted sum of its features. */
export function memberScore(
  f: Record<MemberFeature, number>,
  group: MemberGroup,
  weights: MemberWeights = PYTHON_MEMBER_WEIGHTS,
): number {
  let c = compiled.get(weights);
  if (!c) compiled.set(weights, (c = { self: weightsFor(weights, "self"), other: weightsFor(weights, "other") }));
  const w = c[group];
  let s = 0;
  for (let i = 0; i < MEMBER_FEATURES.length; i++) s += w[i]! * f[MEMBER_FEATURES[i]!];
  return s - DUNDER_PENALTY * f.dunder;
}

/** One candidate as the training script sees it. */
export interface MemberRow {
  label: string;
  features: number[];
}

/**
 * Where the candidates of each member completion go while the training script runs (undefined
 * otherwise: nothing is recorded).
 */
export const memberRecorder: { record?: ((group: MemberGroup, rows: MemberRow[]) => void) | undefined } = {};
