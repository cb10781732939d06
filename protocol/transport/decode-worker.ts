/**
 * Large requests decoded off the event loop (docs/performance.md, The hostile neighbour). Decoding a
 * request near the size limit holds a server's one thread for milliseconds (JSON.parse of long runs of
 * numbers most of all), and no fair turn can cut that short. A server that forwards requests rather than reading them whole
 * (the orchestrator) has requests from `minBytes` up decoded and validated in a worker thread, which
 * answers with the request's *skeleton*: every member the orchestrator and validation read (action,
 * trace_id, constraints, the context's language, file_path, workspace_root and cursor; source_code as
 * an empty string of the same type), the top-level members' places in the text, and nothing else. The
 * event loop then validates and routes the skeleton (the same faults give the same errors: every field
 * validation reads is there) and forwards the client's bytes with its own fields spliced in
 * (protocol/transport/json.ts spliceJsonObject).
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import { AipError, isAipError, type ErrorCode } from "../contract/errors.js";
import { decodeJsonText, jsonObjectMembers, jsonTextOf, type JsonMember, type JsonSource } from "./json.js";
import { validateRequest } from "../contract/validate.js";

/** A request decoded: its value (whole, or a worker's skeleton of it) and its JSON. */
export interface DecodedRequest {
  value: unknown;
  source: JsonSource;
}

/** What the worker makes of one request's bytes. */
export type SkeletonResult =
  | {
      kind: "skeleton";
      skeleton: Record<string, unknown>;
      /** The text to forward when it is not the bytes' own: validation's copy of the request, re-encoded. */
      text?: string;
      members: JsonMember[];
    }
  | { kind: "error"; code: ErrorCode; message: string; suggestion?: string; extensions?: Record<string, unknown> }
  /** Not a JSON object: decoded on the event loop after all (its error names the value). */
  | { kind: "whole" };

/** The context members validation or routing read (protocol/contract/validate.ts, orchestrator/request/router.ts). */
const CONTEXT_READ = ["language", "file_path", "workspace_root", "cursor"] as const;
/** The heap a decode worker may use: a request is at most a few MiB decoded. */
const WORKER_HEAP_MB = 64;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The skeleton of the request in `bytes` (what the worker answers; exported for tests): the members
 * validation and routing read, and where the top-level members are in the text. A request validation
 * rewrites (zod's copy) is re-encoded here and its skeleton is that copy's.
 */
export function skeletonOf(bytes: Uint8Array, maxDepth: number): SkeletonResult {
  let value: unknown;
  let text: string;
  try {
    ({ value, text } = decodeJsonText(bytes, maxDepth));
  } catch (err) {
    if (!isAipError(err)) throw err;
    return {
      kind: "error",
      code: err.code,
      message: err.message,
      ...(err.suggestion !== undefined ? { suggestion: err.suggestion } : {}),
      ...(err.extensions !== undefined ? { extensions: err.extensions } : {}),
    };
  }
  if (!isObject(value)) return { kind: "whole" };
  let request: Record<string, unknown> = value;
  try {
    request = validateRequest(value) as Record<string, unknown>;
  } catch {
    // Invalid: the skeleton keeps every field validation reads, so the event loop finds the same fault.
  }
  const rewritten = request !== value;
  if (rewritten) text = JSON.stringify(request);
  const skeleton: Record<string, unknown> = {};
  for (const k of ["action", "trace_id", "constraints"]) if (Object.hasOwn(request, k)) skeleton[k] = request[k];
  if (Object.hasOwn(request, "context")) {
    const cx = request.context;
    if (isObject(cx)) {
      const kept: Record<string, unknown> = {};
      for (const k of CONTEXT_READ) if (Object.hasOwn(cx, k)) kept[k] = cx[k];
      if (Object.hasOwn(cx, "source_code")) kept.source_code = typeof cx.source_code === "string" ? "" : cx.source_code;
      skeleton.context = kept;
    } else skeleton.context = cx;
  }
  // JSON.parse accepted an object: only blank space comes before its `{`.
  const { members } = jsonObjectMembers(text, text.indexOf("{"));
  return { kind: "skeleton", skeleton, ...(rewritten ? { text } : {}), members };
}

/** The worker's script: this module, built (under the test runner the source is TypeScript: dist's). */
function workerScript(): URL | undefined {
  const here = fileURLToPath(import.meta.url);
  const script = here.endsWith(".ts")
    ? here.replace(/\/protocol\/transport\/decode-worker\.ts$/, "/dist/protocol/transport/decode-worker.js")
    : here;
  return existsSync(script) ? new URL(`file://${script}`) : undefined;
}

/**
 * Decodes requests of `minBytes` and more in one worker thread, started on first use; what it cannot
 * do (no worker, the worker gone, not an object) is decoded on the event loop as before.
 */
export class DecodeWorker {
  private worker: Worker | undefined;
  private failed = false;
  private nextId = 1;
  private readonly pending = new Map<number, (r: SkeletonResult | undefined) => void>();

  constructor(
    readonly minBytes: number,
    private readonly maxDepth: number,
  ) {}

  /** Decode `bytes`: a skeleton from the worker, or the whole request decoded here. Throws the AIP error. */
  async decode(bytes: Uint8Array): Promise<DecodedRequest> {
    const w = this.start();
    const reply = w
      ? await new Promise<SkeletonResult | undefined>((resolve) => {
          const id = this.nextId++;
          this.pending.set(id, resolve);
          const copy = new Uint8Array(bytes); // its own buffer, handed over whole
          w.postMessage({ id, bytes: copy, maxDepth: this.maxDepth }, [copy.buffer]);
        })
      : undefined;
    if (reply?.kind === "error") {
      throw new AipError(reply.code, reply.message, {
        ...(reply.suggestion !== undefined ? { suggestion: reply.suggestion } : {}),
        ...(reply.extensions !== undefined ? { extensions: reply.extensions } : {}),
      });
    }
    if (reply?.kind === "skeleton") {
      const text = reply.text ?? jsonTextOf(bytes);
      return { value: reply.skeleton, source: { text, members: reply.members, validated: true } };
    }
    const whole = decodeJsonText(bytes, this.maxDepth);
    return { value: whole.value, source: { text: whole.text } };
  }

  close(): void {
    const w = this.worker;
    this.worker = undefined;
    this.failed = true;
    void w?.terminate();
    this.settleAll();
  }

  private settleAll(): void {
    for (const resolve of this.pending.values()) resolve(undefined);
    this.pending.clear();
  }

  private start(): Worker | undefined {
    if (this.worker || this.failed) return this.worker;
    const script = workerScript();
    if (!script) {
      this.failed = true;
      return undefined;
    }
    const w = new Worker(script, {
      workerData: { aipDecodeWorker: true },
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
      stdout: false,
      stderr: false,
    });
    w.unref();
    w.on("message", (m: { id: number; result: SkeletonResult }) => {
      const resolve = this.pending.get(m.id);
      this.pending.delete(m.id);
      resolve?.(m.result);
    });
    const gone = (): void => {
      if (this.worker !== w) return;
      this.worker = undefined; // started again on the next large request
      this.settleAll();
    };
    w.on("error", gone);
    w.on("exit", gone);
    this.worker = w;
    return w;
  }
}

if (!isMainThread && (workerData as { aipDecodeWorker?: boolean } | null)?.aipDecodeWorker && parentPort) {
  const port = parentPort;
  port.on("message", (m: { id: number; bytes: Uint8Array; maxDepth: number }) => {
    let result: SkeletonResult;
    try {
      result = skeletonOf(m.bytes, m.maxDepth);
    } catch {
      result = { kind: "whole" };
    }
    port.postMessage({ id: m.id, result });
  });
}
