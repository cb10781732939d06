/** Fill-in-the-middle detection: from the GGUF metadata (`tokenizer.ggml.fim_*_token_id`), verified by a start-up self-probe. */
import type { LlamaModel, Token } from "node-llama-cpp";

export interface FimInfo {
  available: boolean;
  format: "fim" | "prefix";
  tokens?: {
    prefix: { id: Token; text: string };
    suffix: { id: Token; text: string };
    middle: { id: Token; text: string };
  };
  /** Where the ids came from: the GGUF KVs, or node-llama-cpp's detection by token text. */
  source?: "gguf" | "vocabulary";
  /** Set by the self-probe: the tokens round-trip and a FIM prompt generates. */
  ok?: boolean;
  probe_error?: string;
}

function metaId(model: LlamaModel, key: string): number | undefined {
  const tokenizer = (model.fileInfo.metadata as { tokenizer?: { ggml?: Record<string, unknown> } }).tokenizer?.ggml;
  const v = tokenizer?.[key];
  return typeof v === "number" ? v : undefined;
}

/** FIM tokens of a loaded model, or the prefix format when it has none. */
export function detectFim(model: LlamaModel): FimInfo {
  const infill = model.tokens.infill;
  const pre = metaId(model, "fim_pre_token_id") ?? infill.prefix;
  const suf = metaId(model, "fim_suf_token_id") ?? infill.suffix;
  const mid = metaId(model, "fim_mid_token_id") ?? infill.middle;
  if (pre == null || suf == null || mid == null) return { available: false, format: "prefix" };
  const text = (id: number): string => model.detokenize([id as Token], true);
  return {
    available: true,
    format: "fim",
    source: metaId(model, "fim_pre_token_id") !== undefined ? "gguf" : "vocabulary",
    tokens: {
      prefix: { id: pre as Token, text: text(pre) },
      suffix: { id: suf as Token, text: text(suf) },
      middle: { id: mid as Token, text: text(mid) },
    },
  };
}

/** The tokens' text must tokenize back to exactly the token (with special tokens on). */
export function fimRoundTrips(model: LlamaModel, fim: FimInfo): boolean {
  if (!fim.tokens) return false;
  return Object.values(fim.tokens).every((t) => {
    const back = model.tokenize(t.text, true);
    return back.length === 1 && back[0] === t.id;
  });
}
