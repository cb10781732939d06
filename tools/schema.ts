/** The published contract files (`npm run schema` writes them): protocol/contract/schema.json and protocol/contract/openapi.json from protocol/contract/published.ts (a test keeps them equal). */
import { openApiDocument, schemaDocument } from "../protocol/contract/published.js";

/** The committed files' text: 2-space JSON and a final newline. */
export function publishedFiles(): Record<string, string> {
  return {
    "protocol/contract/schema.json": `${JSON.stringify(schemaDocument(), null, 2)}\n`,
    "protocol/contract/openapi.json": `${JSON.stringify(openApiDocument(), null, 2)}\n`,
  };
}
