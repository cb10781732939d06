/**
 * One contract per action: the zod schemas of its `context`, `constraints` and `payload`. The agents
 * validate requests with them (`actionInput`), `GET /v1/schema` serves them as JSON Schema, and the
 * LSP and MCP servers build on them (docs/integrations.md).
 *
 * Positions: `line` is 1-based, `column` counts UTF-16 code units from 0 (what JavaScript string
 * indices, LSP and most editors count).
 */
import { z } from "zod";
import { AipError } from "./errors.js";
import { ConstraintsSchema, ContextSchema, CursorSchema, type AipRequest } from "./schemas.js";

/** An integer in [min, max]; every fault reads "expected an integer from min to max". */
function intIn(min: number, max: number) {
  const error = `expected an integer from ${min} to ${max}`;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error });
}

const NON_EMPTY = "expected a non-empty string";
/** The largest constraints.inference_timeout_ms (summarize's and complete's model inference limit). */
export const INFERENCE_TIMEOUT_MAX_MS = 60_000;
/** A string with something other than white space in it. */
const nonEmpty = () => z.string({ error: NON_EMPTY }).regex(/\S/, { error: NON_EMPTY });

function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: `expected one of ${values.join(", ")}` });
}

const STRINGS = "expected an array of non-empty strings";
const strings = () => z.array(z.string({ error: STRINGS }).min(1, { error: STRINGS }), { error: STRINGS });
const bool = () => z.boolean({ error: "expected a boolean" });

/** Diagnostics and partial results a code agent may add when the buffer does not parse as a whole. */
const DiagnosticSchema = z.looseObject({
  message: z.string(),
  line: z.number().int().min(1).optional(),
  column: z.number().int().min(0).optional(),
});
const Recoverable = {
  diagnostics: z.array(DiagnosticSchema).optional(),
  partial: z.boolean().optional(),
};

const LATEST_WINS = {
  document_id: z
    .string()
    .min(1)
    .optional()
    .describe("latest wins: a newer request with the same client_id + document_id cancels this one"),
  client_id: z.string().optional(),
};

// ---- echo (agent-dummy) ----
export const EchoContextSchema = ContextSchema;
export const EchoConstraintsSchema = ConstraintsSchema.extend({
  delay_ms: intIn(0, 60_000).optional(),
  ...LATEST_WINS,
});
export const EchoPayloadSchema = z.looseObject({
  received_action: z.string(),
  context_lines: z.number().int().min(0),
  trace_id: z.string(),
});

// ---- summarize ----
const Scope = oneOf(["module", "function"]);
export const SummarizeContextSchema = ContextSchema.extend({
  scope: Scope.optional().describe("deprecated: use constraints.scope"),
});
export const SummarizeConstraintsSchema = ConstraintsSchema.extend({
  scope: Scope.optional().describe('"module" (default) or "function" (needs context.cursor)'),
  max_tokens: intIn(1, 512).optional(),
  inference_timeout_ms: intIn(1, INFERENCE_TIMEOUT_MAX_MS).optional(),
  ...LATEST_WINS,
});
const ParamSchema = z.looseObject({
  name: z.string(),
  type: z.string().optional(),
  default: z.string().optional(),
  optional: z.boolean(),
  rest: z.boolean(),
});
export const SignatureSchema = z.looseObject({
  name: z.string(),
  kind: z.string(),
  class: z.string().optional(),
  exported: z.boolean(),
  async: z.boolean(),
  generator: z.boolean(),
  params: z.array(ParamSchema),
  returns: z.string().optional(),
  text: z.string(),
  doc: z.string(),
  decorators: z.array(z.string()),
  line_start: z.number().int().min(1),
  line_end: z.number().int().min(1),
});
const Named = { name: z.string(), doc: z.string() };
export const OutlineSchema = z.looseObject({
  lines: z.number().int().min(0),
  module_doc: z.string(),
  imports: z.array(z.looseObject({ from: z.string(), names: z.array(z.string()), line: z.number().int() })),
  exports: z.array(
    z.looseObject({
      name: z.string(),
      kind: z.string(),
      type_only: z.boolean(),
      line: z.number().int(),
      from: z.string().optional(),
    }),
  ),
  functions: z.array(SignatureSchema),
  classes: z.array(
    z.looseObject({
      ...Named,
      exported: z.boolean(),
      extends: z.string().optional(),
      decorators: z.array(z.string()),
      line_start: z.number().int(),
      line_end: z.number().int(),
      members: z.array(
        z.looseObject({
          ...Named,
          kind: z.string(),
          static: z.boolean(),
          access: z.string().optional(),
          signature: z.string(),
          line: z.number().int(),
        }),
      ),
    }),
  ),
  types: z.array(
    z.looseObject({
      ...Named,
      kind: z.string(),
      exported: z.boolean(),
      line_start: z.number().int(),
      line_end: z.number().int(),
    }),
  ),
  consts: z.array(
    z.looseObject({
      ...Named,
      kind: z.string(),
      type: z.string().optional(),
      exported: z.boolean(),
      line: z.number().int(),
    }),
  ),
});
export const SummarizePayloadSchema = z.looseObject({
  file_path: z.string().optional(),
  language: z.string().optional(),
  scope: Scope,
  summary: z.string(),
  outline: OutlineSchema.optional().describe('scope "module"'),
  function: SignatureSchema.optional().describe('scope "function"'),
  summary_source: oneOf(["model", "extractive"]).optional(),
  ...Recoverable,
});

// ---- search ----
export const SearchContextSchema = ContextSchema.extend({
  workspace_root: nonEmpty().describe("absolute path of the workspace to search"),
  query: nonEmpty(),
});
export const SearchConstraintsSchema = ConstraintsSchema.extend({
  limit: intIn(1, 200).optional().describe("default 10"),
  paths: strings().optional().describe('globs, e.g. ["src/**"]'),
  languages: strings().optional(),
  refresh_ms: intIn(0, 86_400_000).optional().describe("rescan when the index is older than this (default 2000)"),
  ...LATEST_WINS,
});
export const SearchHitSchema = z.looseObject({
  path: z.string(),
  line_start: z.number().int().min(1),
  line_end: z.number().int().min(1),
  symbol: z.string().nullable(),
  kind: z.string(),
  score: z.number(),
  snippet: z.string(),
});
export const SearchPayloadSchema = z.looseObject({
  query: z.string(),
  hits: z.array(SearchHitSchema),
  index: z.looseObject({
    files: z.number().int().min(0),
    chunks: z.number().int().min(0),
    refreshed: z.looseObject({}).optional(),
  }),
});

// ---- testgen ----
export const FRAMEWORKS = ["vitest", "jest", "node:test"] as const;
/** Test frameworks for Python targets (testgen picks the workspace's when not asked). */
export const PYTHON_FRAMEWORKS = ["pytest", "unittest"] as const;
export const TestgenContextSchema = ContextSchema;
/** The longest constraints.test_path, in characters. */
export const TEST_PATH_MAX_CHARS = 1024;
/**
 * Where the test goes: a path relative to the workspace root that stays inside it. A refusal names the
 * rule, never the value (it may be hostile text meant to be shown back: a prompt, markup, a terminal escape).
 */
const testPath = () =>
  nonEmpty()
    .max(TEST_PATH_MAX_CHARS, { error: `expected at most ${TEST_PATH_MAX_CHARS} characters` })
    .refine((p) => ![...p].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f), {
      error: "expected no control characters",
    })
    .refine((p) => !p.startsWith("/") && !p.startsWith("~"), {
      error: "expected a path relative to the workspace root, not an absolute one",
    })
    .refine((p) => !p.split(/[\\/]/).includes(".."), {
      error: "expected no '..' segment: the test stays inside the workspace",
    });

export const TestgenConstraintsSchema = ConstraintsSchema.extend({
  framework: oneOf([...FRAMEWORKS, ...PYTHON_FRAMEWORKS])
    .optional()
    .describe("default vitest; for Python pytest, or unittest when the workspace's tests use it"),
  function: nonEmpty().optional().describe('"add" or "Class.method"; else the function at context.cursor'),
  test_path: testPath()
    .optional()
    .describe(
      "where the test goes, relative to the workspace root and inside it (no '..'); default beside or mirroring the source",
    ),
  run_timeout_ms: intIn(0, 120_000)
    .optional()
    .describe("the workspace's test runner is killed after this long (default 20000; 0: do not run)"),
  ...LATEST_WINS,
});
const TestVerdictSchema = z.looseObject({
  test: z.string(),
  outcome: oneOf(["todo", "dropped"]),
  reason: z.string(),
});
export const TestgenPayloadSchema = z.looseObject({
  test_path: z.string(),
  framework: oneOf([...FRAMEWORKS, ...PYTHON_FRAMEWORKS]),
  content: z.string(),
  signature: SignatureSchema,
  import: z.looseObject({ specifier: z.string(), name: z.string(), default: z.boolean() }).nullable(),
  notes: z.array(z.string()),
  tests: z
    .looseObject({
      kept: z.number().int().min(0).describe("it() cases in content that passed every check that ran"),
      todo: z.number().int().min(0).describe("cases that failed their run, emitted as it.todo with the reason"),
      dropped: z.number().int().min(0).describe("cases left out: a typecheck error, a load error, a runner timeout"),
      value_assertions: z.number().int().min(0).describe("kept cases asserting a value or a throw (not toBeDefined)"),
      from_examples: z.number().int().min(0).describe("kept cases from the doc comment's @example results"),
      verdicts: z.array(TestVerdictSchema),
    })
    .optional(),
  checks: z
    .looseObject({
      typecheck: oneOf(["passed", "failed", "skipped"]),
      run: oneOf(["passed", "failed", "timeout", "load-error", "skipped"]),
      runner: oneOf(["vitest", "jest", "pytest"]).nullable(),
      run_ms: z.number().int().min(0).optional(),
      skipped: z
        .looseObject({ typecheck: z.string().optional(), run: z.string().optional() })
        .describe("why each skipped check was skipped (a missing runner skips the run; it fails nothing)"),
      framework_types: oneOf(["workspace", "stub"])
        .optional()
        .describe("the test framework's types when typechecking: the workspace's, or an untyped stub"),
      notes: z.array(z.string()),
    })
    .optional(),
  model: z
    .looseObject({
      proposed: z.number().int().min(0).describe("expect lines the model proposed that parse and call the function"),
      kept: z.number().int().min(0).describe("of those, the ones that typechecked and passed a run"),
    })
    .optional()
    .describe("present when a model is configured"),
  ...Recoverable,
});

// ---- complete (both engines) ----
export const CompleteContextSchema = ContextSchema;
export const CompleteConstraintsSchema = ConstraintsSchema.extend({
  max_items: intIn(1, 1000).optional().describe("lite engine: items to return (default 50)"),
  typed_wait_ms: intIn(0, 60_000)
    .optional()
    .describe(
      "complete-lite: how long to wait for the checker before answering from the syntactic engine (default after `expr.` AIP_TYPED_BUDGET_MS, 250; elsewhere AIP_TYPED_IDENTIFIER_BUDGET_MS, 15); complete: how long to wait for the checker's context in the prompt (default 40)",
    ),
  max_tokens: intIn(1, 1024).optional().describe("model engine: tokens to generate (default 64)"),
  inference_timeout_ms: intIn(1, INFERENCE_TIMEOUT_MAX_MS).optional(),
  seed: intIn(0, 2 ** 31).optional(),
  stop: strings().optional(),
  allow_truncation: bool().optional(),
  best_effort: bool().optional(),
  debug_prompt: bool().optional(),
  fallback: oneOf(["lite"]).optional().describe("agent-complete without a model: answer with the lite engine"),
  ...LATEST_WINS,
});
export const CompletionItemSchema = z.looseObject({
  label: z.string(),
  kind: z
    .string()
    .describe(
      "an LSP CompletionItemKind name in camelCase (method, property, variable, snippet, …), or text for a model completion",
    ),
  insert_text: z.string().describe("LSP snippet syntax for kind snippet ($0, ${1:name}); plain text otherwise"),
  detail: z.string(),
  auto_import: z.boolean().optional().describe("typed engine: completing it adds an import of `source`"),
  source: z.string().optional().describe("typed engine: the module an auto-import candidate comes from"),
});
const RangeSchema = z.object({ start: CursorSchema, end: CursorSchema });
export const CompletePayloadSchema = z.looseObject({
  engine: oneOf(["typed", "syntactic", "lite", "model"]).describe(
    "which engine answered, the same shape from all: complete-lite's checker (typed) or its syntactic engine; lite: agent-complete's model-free fallback; model",
  ),
  engine_reason: z.string().optional().describe("syntactic: why the checker did not answer"),
  fallbacks: strings()
    .optional()
    .describe("typed: what the workspace's project fell back to (no tsconfig.json, no node_modules, …) and why"),
  items: z.array(CompletionItemSchema).describe("lite: ranked candidates; model: one item, the generated text"),
  replace: RangeSchema.describe("the text each item replaces (the typed prefix; empty at the cursor for the model)"),
  prefix: z.string().optional(),
  context: z
    .union([oneOf(["member", "identifier"]), z.looseObject({})])
    .optional()
    .describe("lite: member or identifier; model: token accounting"),
  receiver: z.string().optional(),
  receiver_kind: z.string().optional(),
  completion: z.string().optional().describe("model: the generated text"),
  insert_at: CursorSchema.optional(),
  syntax_ok: z.boolean().optional(),
  ...Recoverable,
});

// ---- diagnose ----
export const DiagnoseContextSchema = ContextSchema.extend({
  output: z
    .string({ error: "expected a string" })
    .optional()
    .describe("tool output to diagnose: tsc, a vitest/jest/node:test failure, a Node stack trace, a Python traceback"),
  output_path: nonEmpty()
    .optional()
    .describe(
      "the same read from a log file inside workspace_root (at most 16 MiB; the middle of a long log is skipped)",
    ),
  ranges: z
    .array(RangeSchema)
    .max(16, { error: "at most 16 ranges" })
    .optional()
    .describe(
      "the region to check first in a long changed file (the edited or visible lines); else context.cursor, else the span changed since the buffer the checker held",
    ),
});
export const DiagnoseConstraintsSchema = ConstraintsSchema.extend({
  verify: bool().optional().describe("check every fix on an in-memory copy of the files (default true)"),
  verify_budget_ms: intIn(0, 60_000)
    .optional()
    .describe(
      "how long the checks of fixes may take (default 1000): the rest are marked unchecked, and a request for the same text goes on where it stopped",
    ),
  check_wait_ms: intIn(0, 60_000)
    .optional()
    .describe(
      "how long to wait for the workspace's checker (default: 10000 once it is loaded; while it loads, the parser answers at once unless this is given)",
    ),
  coverage: oneOf(["auto", "file"])
    .optional()
    .describe(
      'file (default): the whole file, waiting up to check_wait_ms; auto (what an editor asks after each edit): a changed file of 500 lines or more is type-checked in its edited region first (payload coverage "region", no fixes yet), the whole file next in the background',
    ),
  max_tokens: intIn(1, 512).optional().describe("model: tokens for the explanation (default 96)"),
  inference_timeout_ms: intIn(1, INFERENCE_TIMEOUT_MAX_MS).optional(),
  ...LATEST_WINS,
});
const EditSchema = z.looseObject({ file_path: z.string(), range: RangeSchema, new_text: z.string() });
export const DiagnoseFixSchema = z.looseObject({
  description: z.string(),
  fix_name: z.string().describe("TypeScript's fix name, agency.* for the agent's own repairs, model"),
  source: oneOf(["typescript", "agency", "model"]),
  verified: z.boolean().describe("applied to an in-memory copy and checked: the error is gone and no error appeared"),
  not_verified: z.string().optional().describe("why not verified: the errors left, or why it was not checked"),
  edits: z.array(EditSchema),
});
export const DiagnoseDiagnosticSchema = z.looseObject({
  file_path: z.string(),
  line: z.number().int().min(1),
  column: z.number().int().min(0),
  range: RangeSchema,
  code: z.string().describe('"TS2304", or "syntax" when only the parser answered'),
  message: z.string(),
  severity: oneOf(["error", "warning"]),
  fixes: z.array(DiagnoseFixSchema).describe("verified first"),
});
const FrameSchema = z.looseObject({
  raw: z.string(),
  function: z.string().optional(),
  kind: oneOf(["workspace", "dependency", "runtime", "outside", "unmapped"]),
  file_path: z.string().optional(),
  line: z.number().int().optional(),
  column: z.number().int().optional(),
  mapped_from: z.looseObject({ file_path: z.string(), line: z.number().int() }).optional(),
  reason: z.string().optional(),
});
const CauseSchema = z.looseObject({
  file_path: z.string(),
  line: z.number().int().min(1),
  code: z.string().optional().describe("the lines around the cause, numbered, the cause marked >"),
  definition: z.looseObject({ name: z.string(), where: z.string() }).optional(),
});
const AssertionSchema = z.looseObject({
  expected: z.string().optional(),
  actual: z.string().optional(),
  test_line: z.looseObject({ file_path: z.string(), line: z.number().int() }).optional(),
});
export const DiagnosePayloadSchema = z.looseObject({
  mode: oneOf(["file", "output"]),
  engine: oneOf(["checker", "syntax"])
    .optional()
    .describe("file: the workspace's checker, or the parser alone (engine_reason)"),
  engine_reason: z.string().optional(),
  coverage: oneOf(["file", "region"])
    .optional()
    .describe(
      'file mode, checker: "region" when only checked_ranges were type-checked (syntax errors are the whole file\'s; fixes not checked yet): ask again, or with constraints.coverage "file", for the whole file',
    ),
  checked_ranges: z
    .array(RangeSchema)
    .optional()
    .describe('with coverage "region": the spans type-checked, whole declarations around the edit'),
  tool: oneOf(["tsc", "vitest", "jest", "node:test", "node", "python", "unknown"]).optional(),
  diagnostics: z.array(DiagnoseDiagnosticSchema),
  failures: z
    .array(
      z.looseObject({
        test: z.string().optional(),
        error: z.string().optional(),
        message: z.string(),
        assertion: AssertionSchema.optional(),
        cause: CauseSchema.optional().describe("the innermost frame in the workspace's own code"),
        frames: z.array(FrameSchema),
      }),
    )
    .optional(),
  cause: CauseSchema.optional(),
  assertion: AssertionSchema.optional(),
  model: z
    .looseObject({ used: z.boolean(), reason: z.string().optional(), explanation: z.string().optional() })
    .describe("without a model: used false and why"),
  notes: z.array(z.string()),
});

export interface ActionContract {
  context: z.ZodType<Record<string, unknown>>;
  constraints: z.ZodType<Record<string, unknown>>;
  payload: z.ZodType<Record<string, unknown>>;
  description: string;
}

/** Every action the bundled agents serve, with its contract. */
export const ACTIONS = {
  echo: {
    context: EchoContextSchema,
    constraints: EchoConstraintsSchema,
    payload: EchoPayloadSchema,
    description: "agent-dummy: echoes the action, the source's line count and the trace id",
  },
  summarize: {
    context: SummarizeContextSchema,
    constraints: SummarizeConstraintsSchema,
    payload: SummarizePayloadSchema,
    description: "outline and short summary of a module, or of the function at the cursor",
  },
  search: {
    context: SearchContextSchema,
    constraints: SearchConstraintsSchema,
    payload: SearchPayloadSchema,
    description: "ranked BM25 hits over a workspace's code and docs",
  },
  testgen: {
    context: TestgenContextSchema,
    constraints: TestgenConstraintsSchema,
    payload: TestgenPayloadSchema,
    description: "a test file for the function at the cursor or named in constraints.function",
  },
  complete: {
    context: CompleteContextSchema,
    constraints: CompleteConstraintsSchema,
    payload: CompletePayloadSchema,
    description: "completions at the cursor (lite engine: ranked items; model engine: generated text)",
  },
  diagnose: {
    context: DiagnoseContextSchema,
    constraints: DiagnoseConstraintsSchema,
    payload: DiagnosePayloadSchema,
    description: "a file's errors with checked fixes, or the cause of a failure in tool output mapped to the workspace",
  },
} as const satisfies Record<string, ActionContract>;
export type ActionName = keyof typeof ACTIONS;

/** Fields whose refused value is never shown back (paths a client may fill with text meant for a reader). */
const UNSHOWN = new Set(["constraints.test_path"]);

/** zod issues → the AIP-1 error: a missing required field is MISSING_FIELD naming it, anything else INVALID_FIELD with "expected X, got Y". */
export function issuesToError(error: z.ZodError, prefix: string): AipError {
  const pathOf = (issue: z.core.$ZodIssue): string => [prefix, ...issue.path.map(String)].join(".");
  const missing = error.issues.filter((i) => i.code === "invalid_type" && i.input === undefined).map(pathOf);
  if (missing.length > 0) {
    return new AipError(
      "AIP_ERR_MISSING_FIELD",
      `Missing required field${missing.length > 1 ? "s" : ""}: ${missing.join(", ")}`,
      { extensions: { fields: missing } },
    );
  }
  const errors = error.issues.map((i) => ({ path: pathOf(i), message: i.message }));
  const detail = error.issues
    .map((i) => {
      if (UNSHOWN.has(pathOf(i)))
        return `${pathOf(i)}: ${i.message}, got ${typeof i.input === "string" ? `a string of ${i.input.length} characters` : typeof i.input}`;
      const shown = JSON.stringify(i.input) ?? String(i.input);
      return `${pathOf(i)}: ${i.message}, got ${shown.length > 60 ? `${shown.slice(0, 57)}...` : shown}`;
    })
    .join("; ");
  return new AipError("AIP_ERR_INVALID_FIELD", detail, { extensions: { errors } });
}

/** A request's context and constraints checked against the action's contract, typed; throws the AIP-1 error otherwise. */
export function actionInput<A extends ActionName>(
  action: A,
  request: Pick<AipRequest, "context" | "constraints">,
): { context: z.output<(typeof ACTIONS)[A]["context"]>; constraints: z.output<(typeof ACTIONS)[A]["constraints"]> } {
  const contract = ACTIONS[action];
  // Parsed without `reportInput` first: with it zod leaves its compiled fast path (microseconds a
  // request); a failure is parsed again with it, for the error's details (docs/performance.md).
  const context = contract.context.safeParse(request.context);
  if (!context.success)
    throw issuesToError(contract.context.safeParse(request.context, { reportInput: true }).error!, "context");
  const constraints = contract.constraints.safeParse(request.constraints);
  if (!constraints.success)
    throw issuesToError(
      contract.constraints.safeParse(request.constraints, { reportInput: true }).error!,
      "constraints",
    );
  return { context: context.data, constraints: constraints.data } as never;
}
