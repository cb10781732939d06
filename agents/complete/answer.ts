/** The one complete shape of a model's answer (protocol/contract/actions.ts), for every served language. */

/** A position in the buffer, as AIP-1 carries it. */
export interface Cursor {
  line: number;
  column: number;
}

/** The generated text as the single item, inserted at the cursor. */
export function modelCompletion(text: string, cursor: Cursor) {
  return {
    engine: "model" as const,
    items: [{ label: text.split("\n", 1)[0]!.trim() || text, kind: "text", insert_text: text, detail: "model" }],
    replace: { start: cursor, end: cursor },
    completion: text,
    insert_at: cursor,
  };
}
