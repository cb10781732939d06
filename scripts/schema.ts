/** `npm run schema`: write protocol/contract/schema.json and protocol/contract/openapi.json (a test keeps them equal to the code). */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { publishedFiles } from "../tools/schema.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
for (const [path, text] of Object.entries(publishedFiles())) {
  writeFileSync(`${root}${path}`, text);
  console.log(`wrote ${path}`);
}
