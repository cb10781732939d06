/**
 * Work-done progress (`$/progress`) in `aip lsp` while complete-lite's checker loads a workspace: the
 * first completion that comes back "still loading" begins a progress in the editor; aip lsp asks again
 * every `everyMs` (a completion without document_id, so that it never cancels the user's) and reports
 * how long it has been loading, until an answer comes from the checker (or no longer says it is
 * loading), when the progress ends. Meanwhile completion answers come from the syntactic engine.
 */
import { basename } from "node:path";
import type { WorkDoneProgressServerReporter } from "vscode-languageserver/node";

/** What a completion answer says about its engine. */
export interface EngineAnswer {
  engine?: string | undefined;
  engine_reason?: string | undefined;
}

/** True when the answer is the syntactic engine's because the checker is still loading the workspace. */
export function checkerLoading(a: EngineAnswer | undefined): boolean {
  return a?.engine === "syntactic" && /still loading/.test(a.engine_reason ?? "");
}

interface Loading {
  reporter?: WorkDoneProgressServerReporter | undefined;
  timer?: NodeJS.Timeout;
  started: number;
  done: boolean;
}

export class CheckerProgress {
  private readonly loading = new Map<string, Loading>();

  constructor(
    private readonly deps: {
      /** window/workDoneProgress/create (undefined when the client does not support it). */
      create: () => Promise<WorkDoneProgressServerReporter | undefined>;
      /** How often the agent is asked again while it loads, and for how long at most. */
      everyMs: number;
      limitMs: number;
      now?: () => number;
    },
  ) {}

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  /**
   * After a completion answer for a file of `root`: begins, reports or ends the root's progress.
   * `recheck` asks again (undefined when there is nothing to ask with, e.g. the document closed).
   */
  note(root: string | undefined, answer: EngineAnswer, recheck: () => Promise<EngineAnswer | undefined>): void {
    if (root === undefined) return;
    const current = this.loading.get(root);
    if (!checkerLoading(answer)) {
      if (current) this.end(root, current, "the type checker is ready");
      return;
    }
    if (current) return;
    const l: Loading = { started: this.now(), done: false };
    this.loading.set(root, l);
    void this.deps
      .create()
      .catch(() => undefined)
      .then((reporter) => {
        if (l.done) return reporter?.done();
        l.reporter = reporter;
        reporter?.begin(
          "aip: loading types",
          undefined,
          `${basename(root)}: the type checker is loading the workspace; completion answers from declarations meanwhile`,
          false,
        );
        this.schedule(root, l, recheck);
      });
  }

  private schedule(root: string, l: Loading, recheck: () => Promise<EngineAnswer | undefined>): void {
    l.timer = setTimeout(() => {
      void recheck()
        .catch(() => undefined)
        .then((a) => {
          if (l.done) return;
          if (a === undefined) return this.end(root, l, "stopped waiting");
          if (!checkerLoading(a)) return this.end(root, l, "the type checker is ready");
          const s = Math.round((this.now() - l.started) / 1000);
          if (this.now() - l.started >= this.deps.limitMs)
            return this.end(root, l, `still loading after ${s} s; completion answers from declarations`);
          l.reporter?.report(`${basename(root)}: the type checker is loading the workspace (${s} s)`);
          this.schedule(root, l, recheck);
        });
    }, this.deps.everyMs);
    l.timer.unref();
  }

  private end(root: string, l: Loading, message: string): void {
    l.done = true;
    clearTimeout(l.timer);
    this.loading.delete(root);
    if (l.reporter) {
      l.reporter.report(message);
      l.reporter.done();
    }
  }

  /** Ends every progress (shutdown). */
  dispose(): void {
    for (const [root, l] of this.loading) this.end(root, l, "shutting down");
  }
}
