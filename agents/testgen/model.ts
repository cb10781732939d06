/**
 * Model-proposed tests (docs/agents.md, "testgen"), in the manner of TestGen-LLM: the model sees the
 * function and writes `expect(…)` lines; each becomes a case that goes through the same typecheck and
 * run as the others, and is kept only when it typechecks and passes. A proposal that fails either, or
 * that cannot be run (no runner in the workspace), is dropped, never turned into a todo.
 */
import { ts } from "../lib/code/typescript.js";
import type { ModelEngine } from "../lib/llm/engine.js";
import { EngineError } from "../lib/llm/remote/client.js";
import type { TestCase } from "./render.js";

/** Proposals read from one generation, at most. */
export const MAX_PROPOSALS = 3;
/** The function's source shown to the model, at most (characters). */
const MAX_SOURCE_CHARS = 2000;

const MATCHERS = new Set(["toBe", "toEqual", "toStrictEqual", "toThrow", "toBeUndefined", "toBeNull", "toBeNaN"]);

/** `expect(callee(…)).matcher(…);` lines of `text` that parse and call `callee`, as cases. */
export function proposalCases(text: string, callee: string, async: boolean): TestCase[] {
  const out: TestCase[] = [];
  const seen = new Set<string>();
  for (const raw of text.split("\n")) {
    const line = raw.trim().replace(/;?$/, ";");
    if (!line.startsWith("expect(") || seen.has(line)) continue;
    const sf = ts.createSourceFile("p.ts", line, ts.ScriptTarget.Latest, true);
    if ((sf as unknown as { parseDiagnostics: unknown[] }).parseDiagnostics.length > 0) continue;
    const st = sf.statements[0];
    if (sf.statements.length !== 1 || !st || !ts.isExpressionStatement(st)) continue;
    const call = st.expression;
    if (!ts.isCallExpression(call) || !ts.isPropertyAccessExpression(call.expression)) continue;
    if (!MATCHERS.has(call.expression.name.text)) continue;
    const exp = call.expression.expression;
    if (!ts.isCallExpression(exp) || exp.expression.getText(sf) !== "expect" || exp.arguments.length !== 1) continue;
    const subject = exp.arguments[0]!;
    const inner = ts.isArrowFunction(subject) ? subject.body : subject;
    if (!ts.isCallExpression(inner) || inner.expression.getText(sf) !== callee) continue;
    seen.add(line);
    const body = async && !ts.isArrowFunction(subject) ? line.replace(/^expect\(/, "expect(await ") : line;
    out.push({ title: `model: ${line.length > 70 ? `${line.slice(0, 67)}...` : line}`, body, async, kind: "model" });
    if (out.length >= MAX_PROPOSALS) break;
  }
  return out;
}

/** Ask the model for `expect` lines about `callee`; [] when it is not ready, fails or runs out of time. */
export async function modelProposals(
  host: ModelEngine,
  fnSource: string,
  callee: string,
  async: boolean,
  limitMs: number,
  signal: AbortSignal,
): Promise<TestCase[]> {
  if (!host.ready || limitMs <= 0) return [];
  if (host.unavailable() !== undefined) {
    host.fallbacks.circuit_open++;
    return [];
  }
  const prompt = `${fnSource.slice(0, MAX_SOURCE_CHARS)}\n\n// Tests of ${callee} with concrete expected values:\nexpect(${callee}(`;
  try {
    const gen = await host.generate(host.tokenize(prompt), {
      maxTokens: 160,
      temperature: 0,
      seed: 0,
      stop: ["\n\n"],
      signal: AbortSignal.any([signal, AbortSignal.timeout(limitMs)]),
    });
    return proposalCases(`expect(${callee}(${gen.text}`, callee, async);
  } catch (err) {
    if (err instanceof EngineError) host.fallbacks.engine_error++;
    return [];
  }
}
