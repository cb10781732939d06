/** What of its environment a function reads: its examples then state the author's command line and terminal. */
import { describe, expect, it } from "vitest";
import { environmentOf } from "../../../agents/testgen/effects.js";
import { dialectOf } from "../../../agents/lib/code/language.js";
import { parseFile } from "../../../agents/lib/code/parse.js";
import { targetByName } from "../../../agents/testgen/target.js";

function environment(source: string, name: string): string | undefined {
  const file = parseFile(source, dialectOf(undefined, "m.js"), "m.js");
  return environmentOf(targetByName(file, name).slice.fn, file.program);
}

describe("environmentOf", () => {
  const source = [
    "export function hasFlag(flag, argv = process.argv) { return argv.includes(`--${flag}`); }",
    "export function isInteractive({ stream = process.stdout } = {}) { return Boolean(stream && stream.isTTY); }",
    "function cwd() { return process.cwd(); }",
    "export function locate(paths, options = {}) { const root = options.cwd ?? cwd(); return paths.find((p) => p.startsWith(root)); }",
    "export function unicode() { return process.env.TERM !== 'linux' && process.platform !== 'win32'; }",
    "export function pad(s, n) { return s.padStart(n); }",
    "function random(min, max) { return Math.floor(Math.random() * (max - min + 1) + min); }",
    "export function draw(a) { return a[random(0, a.length - 1)]; }",
    "export function uid() { return crypto.randomUUID(); }",
    "export function isToday(d) { return d.toDateString() === new Date().toDateString(); }",
    "export function since(d) { return Date.now() - d; }",
    "export function at(y) { return new Date(y, 0, 1); }",
  ].join("\n");

  it("reads of the command line, the terminal and the working directory, in the function or its callees", () => {
    expect(environment(source, "hasFlag")).toBe("process.argv");
    expect(environment(source, "isInteractive")).toBe("a stream's isTTY");
    expect(environment(source, "locate")).toBe("process.cwd");
  });

  it("a random source, in the function or its callees: an example's result was one draw", () => {
    expect(environment(source, "draw")).toBe("Math.random");
    expect(environment(source, "uid")).toBe("crypto.randomUUID");
  });

  it("the current time, where a date built from the arguments is none", () => {
    expect(environment(source, "isToday")).toBe("the current time (new Date())");
    expect(environment(source, "since")).toBe("the current time (Date.now)");
    expect(environment(source, "at")).toBeUndefined();
  });

  it("the environment variables and the platform, or no process state at all, are not counted", () => {
    expect(environment(source, "unicode")).toBeUndefined();
    expect(environment(source, "pad")).toBeUndefined();
  });
});
