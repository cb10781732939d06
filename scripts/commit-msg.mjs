#!/usr/bin/env node
/* global process, console */
/**
 * The commit-msg hook: a subject reads as a CHANGELOG line. At most 72 characters, no trailing period,
 * no figures (a number with a unit, a percentage or a ratio: those go in the body), and a body, if any,
 * separated from it by a blank line. Install it once per clone:
 *
 *   git config core.hooksPath scripts/hooks
 *
 * or check a message by hand: `node scripts/commit-msg.mjs FILE` (exit 1 naming each problem).
 */
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

export const MAX_SUBJECT = 72;

/** A measured figure: 12 ms, 1.5 s, 40%, 2.5x, 256 MiB, 1,407 req/s. */
const FIGURE = /\b\d[\d,]*(\.\d+)?\s?(ms|µs|us|s|min|%|x|×|KiB|MiB|GiB|KB|MB|GB|req\/s)(?![\w/])/;

/** The problems of a commit message (git's comment lines dropped); none means it may be committed. */
export function checkMessage(text) {
  const lines = text.split("\n").filter((l) => !l.startsWith("#"));
  const subject = lines[0] ?? "";
  const problems = [];
  if (subject.trim() === "") return ["the subject is empty"];
  if (subject.length > MAX_SUBJECT)
    problems.push(`the subject has ${subject.length} characters; at most ${MAX_SUBJECT} (details go in the body)`);
  if (subject.endsWith(".")) problems.push("the subject ends with a period");
  const figure = FIGURE.exec(subject);
  if (figure) problems.push(`the subject carries a figure ("${figure[0]}"): figures go in the body`);
  if (lines.length > 1 && lines[1].trim() !== "") problems.push("the line after the subject must be blank");
  return problems;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const file = process.argv[2];
  if (!file) {
    console.error("usage: node scripts/commit-msg.mjs COMMIT_MESSAGE_FILE");
    process.exit(2);
  }
  const problems = checkMessage(readFileSync(file, "utf8"));
  for (const p of problems) console.error(`commit-msg: ${p}`);
  process.exit(problems.length === 0 ? 0 : 1);
}
