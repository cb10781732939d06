/**
 * The part of agent-complete's model pipeline that depends on the buffer's language: reading the
 * buffer, slicing the enclosing function from its tree, the module's symbol table for the prompt, and
 * the syntax gate's parse. handler.ts runs every other stage the same way for each language
 * (typescript.ts, python.ts).
 */
import type { AipRequest } from "../../protocol/contract/schemas.js";
import type { ReportedDiagnostic } from "../lib/code/parse.js";
import type { RequestLocation } from "../lib/code/source.js";
import type { Cursor } from "./answer.js";
import type { CodeContext } from "./context.js";
import type { InferInput } from "./infer.js";

/** The buffer at the cursor (the slice stage's output): what every language's slice gives the shared stages. */
export interface Sliced {
  source: string;
  starts: readonly number[];
  loc: RequestLocation;
  cursor: Cursor;
  offset: number;
  code: CodeContext;
}

/** The prompt's parts besides the code: the header, the module's symbol table, the local names. */
export interface PromptText {
  header: string;
  symbols: string;
  locals: string;
}

/** Why complete-lite answers in the model's place. */
export type LiteWhy =
  | { reason: "no_model"; status: string; detail: string }
  | { reason: "circuit_open"; detail: string }
  | { reason: "engine_error"; error: unknown }
  | { reason: "syntax_gate"; retries: number };

export interface CompletionLanguage<S extends Sliced = Sliced> {
  /** The request's text (its buffer, else its file read inside the workspace) and where it lives. */
  read(request: AipRequest): Promise<{ source: string; loc: RequestLocation }>;
  /** Slice: the buffer's tree at the cursor, the enclosing function and the code around the cursor. */
  slice(request: AipRequest, source: string, starts: readonly number[], loc: RequestLocation): S | Promise<S>;
  /** Prompt: the header, the module's symbol table and the names in scope at the cursor. */
  prompt(sliced: S): PromptText;
  /** The syntax gate's inputs for `infer` (the buffer's parse, or a check of its own). */
  gate(sliced: S): Pick<InferInput, "dialect" | "base" | "check">;
  /** `partial` and `diagnostics` when the buffer itself has syntax errors. */
  partial(sliced: S): { partial?: true; diagnostics?: ReportedDiagnostic[] };
  /**
   * Set for a language whose model answers are never an error: complete-lite answers whenever the model
   * cannot (no model, any failure of the call, the gate), and this gives `engine_reason`.
   */
  liteReason?: (why: LiteWhy) => string;
}
