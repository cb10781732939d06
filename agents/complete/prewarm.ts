/**
 * Idle-time tokenisation of the open buffer. A cursor jump puts new farther code into the prompt;
 * tokenising it then (llama.cpp's cost per call and per character, tiktoken's counts per line besides)
 * took a large part of the budget stage on a long file. The prompt
 * takes farther code in file chunks (context.ts CHUNK_LINES) that are the same texts wherever the
 * cursor is, so after a request the agent tokenises the buffer's chunks and counts its lines while
 * nothing else needs the thread: between requests, and while requests wait for the model.
 *
 * It works in slices of about SLICE_MS and only while no request is in a non-model stage (`busy`),
 * so it never runs inside a timed stage; a slice that overlaps a model call's end delays that
 * request by at most one slice (counted in its inference time). A newer buffer replaces the one in
 * progress; the buffer is let go when done.
 */
import type { TokenCounter } from "../lib/llm/budget.js";
import type { ModelEngine } from "../lib/llm/engine.js";
import { fileChunks } from "./context.js";

/** Longest stretch of work between two yields to the event loop. */
const SLICE_MS = 0.5;
/** Chunks tokenised ahead for one buffer at most (ModelHost keeps TOKEN_MEMO_ENTRIES); larger buffers are tokenised up to this. */
export const PREWARM_MAX_CHUNKS = 768;

export class Prewarm {
  private work: Generator<{ text: string; lines: number }> | undefined;
  private scheduled = false;
  /** Requests in a non-model stage now (the handler counts them). */
  private busy = 0;
  readonly stats = { buffers: 0, chunks: 0, slices: 0, errors: 0 };

  constructor(
    private readonly host: ModelEngine,
    private readonly counter: () => TokenCounter,
  ) {}

  /** Tokenise `source` (line starts `starts`) ahead, replacing any buffer in progress. */
  schedule(source: string, starts: readonly number[]): void {
    if (!this.host.ready || !this.host.piecewise) return;
    this.work = limited(fileChunks(source, starts), PREWARM_MAX_CHUNKS);
    this.stats.buffers++;
    this.kick();
  }

  /** A request enters a non-model stage: no slice runs until it leaves (`leave`). */
  enter(): void {
    this.busy++;
  }

  leave(): void {
    this.busy--;
    this.kick();
  }

  /** True while a buffer is being tokenised ahead. */
  get pending(): boolean {
    return this.work !== undefined;
  }

  /** Resolves when no buffer is left to tokenise (tests, benchmarks). */
  idle(): Promise<void> {
    return new Promise((resolve) => {
      const poll = (): void => {
        if (!this.work) resolve();
        else setImmediate(poll);
      };
      poll();
    });
  }

  stop(): void {
    this.work = undefined;
  }

  private kick(): void {
    if (this.scheduled || this.busy > 0 || !this.work) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.slice();
    });
  }

  private slice(): void {
    if (this.busy > 0 || !this.work) return;
    if (!this.host.ready) {
      this.work = undefined;
      return;
    }
    this.stats.slices++;
    try {
      this.step(this.work);
    } catch {
      // Ahead-of-time work only: a request tokenises what it needs itself.
      this.stats.errors++;
      this.work = undefined;
      return;
    }
    this.kick();
  }

  private step(work: Generator<{ text: string; lines: number }>): void {
    const counter = this.counter();
    const until = performance.now() + SLICE_MS;
    do {
      const next = work.next();
      if (next.done) {
        this.work = undefined;
        return;
      }
      const { text } = next.value;
      this.host.tokenizeStable(text);
      for (let i = 0; i < text.length;) {
        const end = text.indexOf("\n", i) + 1 || text.length;
        counter.count(text.slice(i, end));
        i = end;
      }
      this.stats.chunks++;
    } while (performance.now() < until);
  }
}

function* limited<T>(items: Iterable<T>, max: number): Generator<T> {
  let n = 0;
  for (const item of items) {
    if (n++ >= max) return;
    yield item;
  }
}
