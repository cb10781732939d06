/** AIP-1 wire schemas. Types are inferred from them, so the runtime check and the type never drift. */
import { z } from "zod";
import { ERROR_CODES } from "./errors.js";
import { TRACE_ID_PATTERN } from "./trace.js";

export const TraceIdSchema = z.string().regex(TRACE_ID_PATTERN, "expected 1-128 characters of A-Z a-z 0-9 . _ : -");

/** A position: line 1-based, column 0-based in UTF-16 code units (docs/aip-1.md). */
export const CursorSchema = z.object({
  line: z.number().int().min(1).describe("1-based"),
  column: z.number().int().min(0).describe("0-based, in UTF-16 code units"),
});

export const ContextSchema = z.looseObject({
  language: z.string().min(1).optional(),
  file_path: z.string().min(1).optional(),
  workspace_root: z.string().min(1).optional(),
  source_code: z.string().optional(),
  cursor: CursorSchema.optional(),
});

export const ConstraintsSchema = z.looseObject({
  timeout_ms: z.number().int().positive().max(3_600_000).optional(),
  max_tokens: z.number().int().positive().optional(),
  languages: z.array(z.string().min(1)).optional(),
  agent: z.string().min(1).optional(),
  version: z.string().min(1).optional(),
  allow_truncation: z.boolean().optional(),
});

export const RequestSchema = z.looseObject({
  action: z.string().min(1),
  context: ContextSchema,
  constraints: ConstraintsSchema,
  trace_id: TraceIdSchema.optional(),
});
export type AipRequest = z.infer<typeof RequestSchema>;

export const ProblemSchema = z.looseObject({
  type: z.enum(ERROR_CODES as [string, ...string[]]),
  title: z.string(),
  status: z.number().int().min(100).max(599),
  detail: z.string(),
  suggestion: z.string().optional(),
  instance: z.string().optional(),
});

export const TimingsSchema = z.record(z.string(), z.number().nonnegative());

export const SuccessResponseSchema = z.looseObject({
  status: z.literal("success"),
  payload: z.unknown(),
  trace_id: TraceIdSchema,
  agent: z.string().optional(),
  version: z.string().optional(),
  timings_ms: TimingsSchema.optional(),
  warnings: z.array(ProblemSchema).optional(),
});
export type SuccessResponse = z.infer<typeof SuccessResponseSchema>;

export const ErrorResponseSchema = z.looseObject({
  status: z.literal("error"),
  trace_id: TraceIdSchema,
  error: ProblemSchema,
  agent: z.string().optional(),
  version: z.string().optional(),
  timings_ms: TimingsSchema.optional(),
});
export type ErrorResponse = z.infer<typeof ErrorResponseSchema>;

export const ResponseSchema = z.discriminatedUnion("status", [SuccessResponseSchema, ErrorResponseSchema]);
export type AipResponse = z.infer<typeof ResponseSchema>;

/** Kubernetes-style quantities: "200m" or "2" CPUs; "512Mi", "1Gi", "800M" memory. */
export const CpuQuantitySchema = z
  .string()
  .regex(/^(\d+m|\d+(\.\d+)?)$/, 'expected millicores like "200m" or cores like "2"');
export const MemoryQuantitySchema = z
  .string()
  .regex(/^\d+(Ki|Mi|Gi|Ti|K|M|G|T)?$/, 'expected a size like "512Mi" or "2Gi"');

export const ManifestSchema = z.strictObject({
  aip: z.literal("1"),
  name: z.string().regex(/^[a-z][a-z0-9-]{0,62}$/, "expected a lowercase name of letters, digits and dashes"),
  version: z.string().regex(/^\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?$/, "expected a semantic version like 1.0.0"),
  description: z.string().min(1),
  capabilities: z.array(z.string().min(1)).min(1),
  languages: z.array(z.string().min(1)).min(1),
  resources: z.strictObject({
    cpu: CpuQuantitySchema,
    memory: MemoryQuantitySchema,
    gpu: z.boolean(),
  }),
  max_concurrent: z.number().int().min(1).max(10_000),
  timeouts_ms: z.looseObject({ default: z.number().int().positive() }),
});
export type AgentManifest = z.infer<typeof ManifestSchema>;

/** "250m" → 250, "2" → 2000 millicores. */
export function cpuMillicores(quantity: string): number {
  return quantity.endsWith("m") ? Number(quantity.slice(0, -1)) : Math.round(Number(quantity) * 1000);
}

const MEMORY_UNITS: Record<string, number> = {
  "": 1,
  K: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
  Ti: 1024 ** 4,
};

/** "512Mi" → bytes. */
export function memoryBytes(quantity: string): number {
  const m = /^(\d+)([KMGT]i?)?$/.exec(quantity);
  if (!m) throw new Error(`Expected a memory quantity like "512Mi", got ${JSON.stringify(quantity)}`);
  return Number(m[1]) * (MEMORY_UNITS[m[2] ?? ""] ?? 1);
}

/** zod issues as `path: message` lines, the path in dotted form ("context.cursor.line"). */
export function formatIssues(error: z.ZodError): { path: string; message: string }[] {
  return error.issues.map((issue) => ({
    path:
      issue.path.length === 0
        ? "(root)"
        : issue.path
            .map((p) => (typeof p === "number" ? `[${p}]` : String(p)))
            .join(".")
            .replace(/\.\[/g, "["),
    message: issue.message,
  }));
}
