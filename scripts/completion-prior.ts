/**
 * `node dist/scripts/completion-prior.js [node_modules] [exclude,...]`: learn the typed completion
 * engine's member-usage prior (tools/completion-prior.ts) and write agents/lib/completion/prior.ts.
 * The evaluation corpus's packages are excluded by default.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { learnPrior, priorModule } from "../tools/completion-prior.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const nodeModules = process.argv[2] ?? `${root}node_modules`;
const exclude = new Set((process.argv[3] ?? "defu,hookable,ky,scule").split(",").filter(Boolean));
const prior = learnPrior(nodeModules, exclude);
writeFileSync(`${root}agents/lib/completion/prior.ts`, priorModule(prior, "this repository's node_modules"));
console.log(
  `wrote agents/lib/completion/prior.ts: ${prior.names.length} names, ${prior.pairs.length} pairs from ${prior.packages} packages, ${prior.files} files`,
);
