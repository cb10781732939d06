/**
 * An agent's model in the agency config (`agents[].model`): a local GGUF file or an inference server,
 * turned into the AIP_MODEL* variables the agent reads (agents/lib/llm/select.ts). One place per
 * agent, so that completion can use a small fast model and summarize a larger one. The API key is
 * never in the config: only the file that holds it.
 */
import { isAbsolute, resolve } from "node:path";
import { z } from "zod";
import { FIM_DIALECTS } from "../../protocol/contract/model-engine.js";

const LOCAL_ONLY = ["threads", "gpu_layers"] as const;
const REMOTE_ONLY = [
  "name",
  "key_file",
  "fim",
  "fim_template",
  "timeout_ms",
  "stream",
  "connections",
  "ca_file",
] as const;

/** One object for both kinds (a union's errors would not say which field is wrong): `path` or `url`, never both. */
export const ModelConfigSchema = z
  .strictObject({
    /** A .gguf file loaded into the agent's process. */
    path: z.string().min(1).optional(),
    threads: z.number().int().min(1).max(256).optional(),
    gpu_layers: z.number().int().min(0).max(1000).optional(),
    /** The engine's base URL (http or https), e.g. http://llama.inference.svc:8080. */
    url: z
      .string()
      .url()
      .refine((u) => /^https?:\/\//.test(u), "expected an http:// or https:// URL")
      .optional(),
    /** The model the engine serves. */
    name: z.string().min(1).optional(),
    /** A file holding the API key (one line). */
    key_file: z.string().min(1).optional(),
    fim: z.enum(FIM_DIALECTS).optional(),
    /** With fim "template": a model family (qwen, starcoder, codellama, deepseek, codegemma, codestral) or a template. */
    fim_template: z.string().min(1).optional(),
    timeout_ms: z.number().int().min(1).max(600_000).optional(),
    /** Tokens of the model's window (both kinds). */
    context: z.number().int().min(256).max(131072).optional(),
    stream: z.boolean().optional(),
    connections: z.number().int().min(1).max(256).optional(),
    /** PEM file of the CA that signed the engine's certificate. */
    ca_file: z.string().min(1).optional(),
  })
  .superRefine((m, ctx) => {
    const issue = (message: string, path: string[] = []): void => {
      ctx.addIssue({ code: "custom", message, path });
    };
    if ((m.path === undefined) === (m.url === undefined))
      issue("expected either path (a .gguf file) or url (an inference server)");
    if (m.url !== undefined && m.name === undefined)
      issue("an inference server needs name, the model it serves", ["name"]);
    const wrong = m.url !== undefined ? LOCAL_ONLY : m.path !== undefined ? REMOTE_ONLY : [];
    for (const k of wrong)
      if (m[k] !== undefined)
        issue(`${k} applies to ${m.url !== undefined ? "a local model (path)" : "an inference server (url)"} only`, [
          k,
        ]);
  });
export type ModelSettings = z.infer<typeof ModelConfigSchema>;

/** The variables `model` sets; an agent's `env` may not set them as well (one source per setting). */
export const MODEL_ENV_PREFIX = "AIP_MODEL";

/** `model` as the agent's environment variables, paths resolved against `baseDir`. */
export function modelEnv(model: ModelSettings, baseDir: string): Record<string, string> {
  const abs = (p: string): string => (isAbsolute(p) ? p : resolve(baseDir, p));
  const out: Record<string, string> = {};
  const set = (k: string, v: string | number | boolean | undefined): void => {
    if (v !== undefined) out[k] = typeof v === "boolean" ? (v ? "1" : "0") : String(v);
  };
  if (model.path !== undefined) {
    set("AIP_MODEL", abs(model.path));
    set("AIP_MODEL_THREADS", model.threads);
    set("AIP_MODEL_CONTEXT", model.context);
    set("AIP_MODEL_GPU_LAYERS", model.gpu_layers);
    return out;
  }
  set("AIP_MODEL_URL", model.url);
  set("AIP_MODEL_NAME", model.name);
  set("AIP_MODEL_KEY_FILE", model.key_file && abs(model.key_file));
  set("AIP_MODEL_FIM", model.fim);
  set("AIP_MODEL_FIM_TEMPLATE", model.fim_template);
  set("AIP_MODEL_TIMEOUT_MS", model.timeout_ms);
  set("AIP_MODEL_CONTEXT", model.context);
  set("AIP_MODEL_STREAM", model.stream);
  set("AIP_MODEL_CONNECTIONS", model.connections);
  set("AIP_MODEL_CA_FILE", model.ca_file && abs(model.ca_file));
  return out;
}
