#!/usr/bin/env node
/**
 * Writes a tiny llama-architecture GGUF (v3) that node-llama-cpp loads and runs: byte-level GPT-2
 * vocabulary (256 byte tokens + specials, optionally FIM tokens), 1-2 layers, seeded f32 weights.
 * Its output is noise; tests use it to exercise loading, budgets, aborts, retries and accounting.
 * Usage: node dist/scripts/make-tiny-gguf.js OUT.gguf [--no-fim] [--layers N] [--seed N] [--pre NAME]
 */
import { writeFileAtomic } from "../orchestrator/core/state-file.js";

export interface TinyGgufOptions {
  /** Add `<|fim_prefix|>`, `<|fim_suffix|>`, `<|fim_middle|>` and their `tokenizer.ggml.fim_*_token_id` KVs (default true). */
  fim?: boolean;
  layers?: 1 | 2;
  seed?: number;
  contextLength?: number;
  /**
   * llama.cpp's pre-tokenizer (`tokenizer.ggml.pre`), default "qwen2" as in Qwen2.5-Coder. It decides
   * how fast tokenising is: "qwen2" is the fastest (llama.cpp has a hand-written splitter for it), then
   * "starcoder"; "default" and "deepseek-coder" are several times slower (generic std::regex
   * splitting). "gpt2" does not load with this vocabulary.
   */
  pre?: string;
}

/** The pre-tokenizer of the recommended real model (Qwen2.5-Coder), so tokenising costs what it costs there. */
export const DEFAULT_PRE_TOKENIZER = "qwen2";

const E = 32; // embedding
const F = 64; // feed-forward
const HEADS = 2;
const ALIGN = 32;

enum T {
  U32 = 4,
  I32 = 5,
  F32 = 6,
  STRING = 8,
  ARRAY = 9,
}

/** GPT-2's byte → printable unicode mapping (so every byte is a visible token string). */
function byteToUnicode(): string[] {
  const bs: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) bs.push(b);
  for (let b = 0xa1; b <= 0xac; b++) bs.push(b);
  for (let b = 0xae; b <= 0xff; b++) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n++);
    }
  }
  const out: string[] = new Array<string>(256);
  bs.forEach((b, i) => (out[b] = String.fromCodePoint(cs[i]!)));
  return out;
}

/** mulberry32: a small deterministic PRNG; normals via Box-Muller. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  const uniform = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return () => Math.sqrt(-2 * Math.log(uniform() + 1e-12)) * Math.cos(2 * Math.PI * uniform());
}

class Writer {
  private readonly parts: Buffer[] = [];
  size = 0;
  push(b: Buffer): void {
    this.parts.push(b);
    this.size += b.length;
  }
  u32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    this.push(b);
  }
  i32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeInt32LE(v);
    this.push(b);
  }
  u64(v: number | bigint): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.push(b);
  }
  f32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeFloatLE(v);
    this.push(b);
  }
  str(s: string): void {
    const b = Buffer.from(s, "utf8");
    this.u64(b.length);
    this.push(b);
  }
  pad(): void {
    const rem = this.size % ALIGN;
    if (rem) this.push(Buffer.alloc(ALIGN - rem));
  }
  buffer(): Buffer {
    return Buffer.concat(this.parts);
  }
}

type Kv =
  | [string, T.U32 | T.I32 | T.F32 | T.STRING, number | string]
  | [string, "strings", string[]]
  | [string, "i32s", number[]];

/** The whole file as bytes. */
export function tinyGguf(options: TinyGgufOptions = {}): Buffer {
  const fim = options.fim ?? true;
  const layers = options.layers ?? 1;
  const normal = rng(options.seed ?? 42);
  const tokens = byteToUnicode();
  const types = tokens.map(() => 1);
  const special = (text: string): number => {
    tokens.push(text);
    types.push(3);
    return tokens.length - 1;
  };
  const eos = special("<|endoftext|>");
  const fimIds = fim
    ? {
        pre: special("<|fim_prefix|>"),
        mid: special("<|fim_middle|>"),
        suf: special("<|fim_suffix|>"),
        pad: special("<|fim_pad|>"),
      }
    : undefined;
  const V = tokens.length;
  const kvs: Kv[] = [
    ["general.architecture", T.STRING, "llama"],
    ["general.name", T.STRING, fim ? "agency-tiny-fim" : "agency-tiny"],
    ["general.alignment", T.U32, ALIGN],
    ["llama.context_length", T.U32, options.contextLength ?? 4096],
    ["llama.embedding_length", T.U32, E],
    ["llama.block_count", T.U32, layers],
    ["llama.feed_forward_length", T.U32, F],
    ["llama.attention.head_count", T.U32, HEADS],
    ["llama.attention.head_count_kv", T.U32, HEADS],
    ["llama.attention.layer_norm_rms_epsilon", T.F32, 1e-5],
    ["llama.rope.dimension_count", T.U32, E / HEADS],
    ["tokenizer.ggml.model", T.STRING, "gpt2"],
    ["tokenizer.ggml.pre", T.STRING, options.pre ?? DEFAULT_PRE_TOKENIZER],
    ["tokenizer.ggml.tokens", "strings", tokens],
    ["tokenizer.ggml.token_type", "i32s", types],
    ["tokenizer.ggml.merges", "strings", []],
    ["tokenizer.ggml.bos_token_id", T.U32, eos],
    ["tokenizer.ggml.eos_token_id", T.U32, eos],
  ];
  if (fimIds) {
    kvs.push(
      ["tokenizer.ggml.fim_pre_token_id", T.U32, fimIds.pre],
      ["tokenizer.ggml.fim_suf_token_id", T.U32, fimIds.suf],
      ["tokenizer.ggml.fim_mid_token_id", T.U32, fimIds.mid],
      ["tokenizer.ggml.fim_pad_token_id", T.U32, fimIds.pad],
    );
  }
  const tensors: { name: string; dims: number[]; norm: boolean }[] = [
    { name: "token_embd.weight", dims: [E, V], norm: false },
  ];
  for (let i = 0; i < layers; i++) {
    const p = `blk.${i}.`;
    tensors.push(
      { name: `${p}attn_norm.weight`, dims: [E], norm: true },
      { name: `${p}attn_q.weight`, dims: [E, E], norm: false },
      { name: `${p}attn_k.weight`, dims: [E, E], norm: false },
      { name: `${p}attn_v.weight`, dims: [E, E], norm: false },
      { name: `${p}attn_output.weight`, dims: [E, E], norm: false },
      { name: `${p}ffn_norm.weight`, dims: [E], norm: true },
      { name: `${p}ffn_gate.weight`, dims: [E, F], norm: false },
      { name: `${p}ffn_up.weight`, dims: [E, F], norm: false },
      { name: `${p}ffn_down.weight`, dims: [F, E], norm: false },
    );
  }
  tensors.push(
    { name: "output_norm.weight", dims: [E], norm: true },
    { name: "output.weight", dims: [E, V], norm: false },
  );

  const w = new Writer();
  w.push(Buffer.from("GGUF", "ascii"));
  w.u32(3);
  w.u64(tensors.length);
  w.u64(kvs.length);
  for (const [key, type, value] of kvs) {
    w.str(key);
    if (type === "strings" || type === "i32s") {
      w.u32(T.ARRAY);
      w.u32(type === "strings" ? T.STRING : T.I32);
      const arr = value as (string | number)[];
      w.u64(arr.length);
      for (const v of arr) {
        if (type === "strings") w.str(v as string);
        else w.i32(v as number);
      }
      continue;
    }
    w.u32(type);
    if (type === T.STRING) w.str(value as string);
    else if (type === T.U32) w.u32(value as number);
    else if (type === T.I32) w.i32(value as number);
    else w.f32(value as number);
  }
  const sizes = tensors.map((t) => t.dims.reduce((a, b) => a * b, 1) * 4);
  let offset = 0;
  tensors.forEach((t, i) => {
    w.str(t.name);
    w.u32(t.dims.length);
    for (const d of t.dims) w.u64(d);
    w.u32(0); // F32
    w.u64(offset);
    offset += Math.ceil(sizes[i]! / ALIGN) * ALIGN;
  });
  w.pad();
  tensors.forEach((t, i) => {
    const data = Buffer.alloc(sizes[i]!);
    for (let j = 0; j < sizes[i]! / 4; j++) {
      // The end token's output row is zero: its logit is 0, never the greedy maximum, so greedy
      // generation runs to max_tokens or a stop sequence (deterministic lengths for tests).
      const quietEos = t.name === "output.weight" && Math.floor(j / E) === eos;
      data.writeFloatLE(t.norm ? 1 : quietEos ? 0 : 0.5 * normal(), j * 4);
    }
    w.push(data);
    w.pad();
  });
  return w.buffer();
}

/** Write the file atomically (a concurrent reader never sees half a model). */
export function writeTinyGguf(path: string, options: TinyGgufOptions = {}): string {
  writeFileAtomic(path, tinyGguf(options), 0o644);
  return path;
}
