/** Strict JSON decoding for untrusted input: UTF-8 validity, size and nesting limits before JSON.parse. */
import { isUtf8 } from "node:buffer";
import { AipError } from "../contract/errors.js";

/**
 * Deepest nesting of objects/arrays in a JSON text, stopping early once `limit` is passed. Strings are
 * skipped from quote to quote (indexOf), not character by character: a request that is mostly one
 * large string (a source file) costs almost nothing here (docs/performance.md).
 */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const q = closingQuote(text, i);
      if (q === -1) return false; // unterminated: JSON.parse says so
      i = q;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/**
 * Where the JSON string whose opening quote is at `open` ends: the index of its closing quote, the next
 * quote preceded by an even number of backslashes (-1 when unterminated). Skips with indexOf, never
 * character by character.
 */
function closingQuote(text: string, open: number): number {
  let q = open;
  for (;;) {
    q = text.indexOf('"', q + 1);
    if (q === -1) return -1;
    let b = q - 1;
    while (text.charCodeAt(b) === 0x5c) b--;
    if ((q - 1 - b) % 2 === 0) return q;
  }
}

/** Only JSON whitespace (or nothing): looks at the text up to its first other character, never copies it. */
function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return false;
  }
  return true;
}

/** A JSON document decoded, with the text it was decoded from (without a byte order mark). */
export interface DecodedJson {
  value: unknown;
  text: string;
}

/** Decode one JSON document from bytes; every failure is an AIP_ERR_INVALID_JSON with a reason. */
export function decodeJson(bytes: Uint8Array, maxDepth: number): unknown {
  return decodeJsonText(bytes, maxDepth).value;
}

/** The text of UTF-8 bytes (already checked) as JSON reads it: without a byte order mark, which is not part of the JSON. */
export function jsonTextOf(bytes: Uint8Array): string {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** `decodeJson`, keeping the text: a request forwarded unchanged is forwarded as it came (`spliceJsonObject`). */
export function decodeJsonText(bytes: Uint8Array, maxDepth: number): DecodedJson {
  // Validate first (simdutf, no copy), then decode: faster than a fatal TextDecoder on large requests.
  if (!isUtf8(bytes)) throw new AipError("AIP_ERR_INVALID_JSON", "Request is not valid UTF-8");
  const text = jsonTextOf(bytes);
  if (isBlank(text)) throw new AipError("AIP_ERR_INVALID_JSON", "Request is empty: expected one JSON object");
  if (jsonDepthExceeds(text, maxDepth)) {
    throw new AipError("AIP_ERR_INVALID_JSON", `JSON nesting is deeper than the limit of ${maxDepth}`, {
      extensions: { limit: maxDepth },
    });
  }
  try {
    return { value: JSON.parse(text) as unknown, text };
  } catch (err) {
    throw new AipError("AIP_ERR_INVALID_JSON", `JSON parse failed: ${(err as Error).message}`);
  }
}

const isBlankCode = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

function skipBlank(text: string, i: number): number {
  while (i < text.length && isBlankCode(text.charCodeAt(i))) i++;
  return i;
}

/** Text that is not the JSON `spliceJsonObject` was promised (JSON.parse accepted it): a bug, never the client's. */
function notJson(at: number): never {
  throw new Error(`spliceJsonObject: not a JSON object's text at ${at}`);
}

/** The end (exclusive) of the JSON value starting at `i`: strings skipped with indexOf, nesting counted. */
function valueEnd(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === 0x22) {
    const q = closingQuote(text, i);
    return q === -1 ? notJson(i) : q + 1;
  }
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const d = text.charCodeAt(j);
      if (d === 0x22) {
        j = closingQuote(text, j);
        if (j === -1) notJson(i);
      } else if (d === 0x7b || d === 0x5b) depth++;
      else if ((d === 0x7d || d === 0x5d) && --depth === 0) return j + 1;
    }
    return notJson(i);
  }
  // A number, true, false or null: up to the next delimiter.
  let j = i;
  for (; j < text.length; j++) {
    const d = text.charCodeAt(j);
    if (d === 0x2c || d === 0x7d || d === 0x5d || isBlankCode(d)) break;
  }
  return j === i ? notJson(i) : j;
}

export interface JsonMember {
  /** The key, decoded (escapes such as `\u005f` resolved: it is the key JSON.parse saw). */
  key: string;
  /** Where the member's key starts and its value starts and ends. */
  start: number;
  valueStart: number;
  end: number;
}

/** The members of the JSON object whose `{` is at `open` (in text JSON.parse accepted), in order, duplicate keys included. */
export function jsonObjectMembers(text: string, open: number): { members: JsonMember[]; close: number } {
  if (text.charCodeAt(open) !== 0x7b) notJson(open);
  const members: JsonMember[] = [];
  let i = skipBlank(text, open + 1);
  if (text.charCodeAt(i) === 0x7d) return { members, close: i };
  for (;;) {
    if (text.charCodeAt(i) !== 0x22) notJson(i);
    const q = closingQuote(text, i);
    if (q === -1) notJson(i);
    const raw = text.slice(i + 1, q);
    const key = raw.includes("\\") ? (JSON.parse(text.slice(i, q + 1)) as string) : raw;
    const colon = skipBlank(text, q + 1);
    if (text.charCodeAt(colon) !== 0x3a) notJson(colon);
    const valueStart = skipBlank(text, colon + 1);
    const end = valueEnd(text, valueStart);
    members.push({ key, start: i, valueStart, end });
    i = skipBlank(text, end);
    const c = text.charCodeAt(i);
    if (c === 0x7d) return { members, close: i };
    if (c !== 0x2c) notJson(i);
    i = skipBlank(text, i + 1);
  }
}

/**
 * A member's new value for `spliceJsonObject`: its JSON text, undefined to drop it, or a function given
 * where the object's own (last) value for that key starts in the text (undefined when it has none).
 */
export type SpliceValue = string | undefined | ((valueStart: number | undefined) => string | undefined);

/**
 * The JSON object in `text` (which JSON.parse accepted) with the members named in `set` replaced, without
 * decoding or re-encoding the rest: every member with such a key is dropped (duplicates too; JSON.parse
 * keeps the last one, which a function in `set` is given), each new value is appended, and every other
 * member is copied as it came, byte for byte, in order. `open` is where the object's `{` is (by default
 * the text's first non-blank character); `members`, its members where already known (a decode worker
 * found them, protocol/transport/decode-worker.ts), saves scanning the text again. What a decoded-and-re-encoded request cost on the event loop
 * (a 1 MiB source, numbers that grow when written out again) is a scan that skips strings whole
 * (docs/performance.md, The hostile neighbour).
 */
export function spliceJsonObject(
  text: string,
  set: Record<string, SpliceValue>,
  open = skipBlank(text, 0),
  members: readonly JsonMember[] = jsonObjectMembers(text, open).members,
): string {
  const last = new Map<string, number>();
  let out = "{";
  for (const m of members) {
    if (Object.hasOwn(set, m.key)) last.set(m.key, m.valueStart);
    else out += (out.length > 1 ? "," : "") + text.slice(m.start, m.end);
  }
  for (const key of Object.keys(set)) {
    const v = set[key];
    const value = typeof v === "function" ? v(last.get(key)) : v;
    if (value !== undefined) out += `${out.length > 1 ? "," : ""}${JSON.stringify(key)}:${value}`;
  }
  return `${out}}`;
}

/**
 * A request's JSON text as forwarding needs it: the text, and the top-level members of its object where
 * they are already known (`spliceJsonObject`).
 */
export interface JsonSource {
  text: string;
  members?: readonly JsonMember[];
  /**
   * The text is the request as validation returns it (a decode worker validated the whole request and
   * re-encoded validation's copy if it made one): what is forwarded, whatever validating a skeleton of
   * it returns.
   */
  validated?: boolean;
}
