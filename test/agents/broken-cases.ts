/** The broken buffers of the broken-buffer suites (docs/agents.md "Broken buffers"): one module, three ways an editor buffer is broken. */
import { expect } from "vitest";
import type { Json } from "./code-helpers.js";

const SOURCE = `import { join } from "node:path";

/** Joins a directory and a name. */
export function under(dir: string, name: string): string {
  const full = join(dir, name);
  return full;
}

export interface Options {
  base: string;
}

/** Strips the extension from a file name. */
export function stripExtension(name: string): string {
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(0, dot) : name;
}

export const LIMIT = 10;

export class Store {
  items: string[] = [];
  add(item: string): number {
    this.items.push(item);
    return this.items.length;
  }
}
`;

export type Shape = "truncate after the cursor" | "delete the next }" | "cut the rest of the line";

/** The cursor: in Store's method `add`, after `this.`. */
const CURSOR_AT = SOURCE.indexOf("this.items.push") + "this.".length;

export function broken(shape: Shape): { source: string; cursor: { line: number; column: number } } {
  const line = SOURCE.slice(0, CURSOR_AT).split("\n").length;
  const column = CURSOR_AT - SOURCE.lastIndexOf("\n", CURSOR_AT - 1) - 1;
  let source: string;
  if (shape === "truncate after the cursor") source = SOURCE.slice(0, CURSOR_AT);
  else if (shape === "delete the next }") {
    const brace = SOURCE.indexOf("}", CURSOR_AT);
    source = SOURCE.slice(0, brace) + SOURCE.slice(brace + 1);
  } else source = SOURCE.slice(0, CURSOR_AT) + SOURCE.slice(SOURCE.indexOf("\n", CURSOR_AT));
  return { source, cursor: { line, column } };
}

export const SHAPES: Shape[] = ["truncate after the cursor", "delete the next }", "cut the rest of the line"];

/** The diagnostics every shape must carry: at least one, each with a 1-based line at or after the cursor's, a column and a message. */
export function expectDiagnostics(payload: Json, cursorLine: number): void {
  expect(payload.partial).toBe(true);
  expect(payload.diagnostics.length).toBeGreaterThan(0);
  for (const d of payload.diagnostics as { line: number; column: number; message: string }[]) {
    expect(d.line).toBeGreaterThanOrEqual(cursorLine);
    expect(d.column).toBeGreaterThanOrEqual(0);
    expect(d.message).toMatch(/expected|Expression|Declaration/);
  }
}
