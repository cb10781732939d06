/**
 * Fuzz inputs for AIP-1 servers, as fast-check arbitraries: NDJSON lines (valid, malformed, truncated,
 * broken UTF-8, deeply nested, random bytes, HTTP text inside NDJSON) and bogus HTTP requests.
 */
import fc from "fast-check";

/** One NDJSON line's bytes (may contain newlines: it is then several frames). `trace` is set when a valid echo asks for it. */
export interface Line {
  bytes: Buffer;
  trace?: string;
}

let traces = 0;
const utf8 = (s: string): Buffer => Buffer.from(s, "utf8");

/** Valid echo requests with varied context/constraints (some fields of the wrong type). */
const request = fc
  .record({
    context: fc.oneof(
      fc.constant({}),
      fc.record(
        {
          language: fc.string(),
          source_code: fc.string(),
          cursor: fc.record({ line: fc.integer(), column: fc.integer() }),
        },
        { requiredKeys: [] },
      ),
    ),
    constraints: fc.oneof(
      fc.constant({}),
      fc.record(
        {
          timeout_ms: fc.oneof(fc.integer({ min: 100, max: 5000 }), fc.integer(), fc.string()),
          languages: fc.array(fc.string(), { maxLength: 3 }),
          agent: fc.string(),
        },
        { requiredKeys: [] },
      ),
    ),
    action: fc.oneof(fc.constant("echo"), fc.string(), fc.integer()),
  })
  .map((r): Line => {
    const trace = `fz-${++traces}`;
    return { bytes: utf8(JSON.stringify({ ...r, trace_id: trace })), trace };
  });

const anyJson = fc.json({ maxDepth: 6 }).map((s): Line => ({ bytes: utf8(s) }));

const truncated = fc
  .tuple(
    fc.json({ maxDepth: 4 }).filter((s) => s.length > 2),
    fc.double({ min: 0, max: 1, noNaN: true }),
  )
  .map(([s, f]): Line => ({ bytes: utf8(s.slice(0, Math.floor(s.length * f))) }));

/** Invalid UTF-8 sequences spliced into an otherwise valid request. */
const BAD_UTF8 = [
  [0xff],
  [0xc3, 0x28],
  [0xe2, 0x28, 0xa1],
  [0xed, 0xa0, 0x80],
  [0xc0, 0xaf],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0x80],
];
const brokenUtf8 = fc.tuple(fc.constantFrom(...BAD_UTF8), fc.nat()).map(([bad, at]): Line => {
  const s = utf8(JSON.stringify({ action: "echo", context: { source_code: "héllo wörld" }, constraints: {} }));
  const i = at % s.length;
  return { bytes: Buffer.concat([s.subarray(0, i), Buffer.from(bad), s.subarray(i)]) };
});

const deep = fc
  .tuple(fc.integer({ min: 50, max: 20_000 }), fc.boolean(), fc.constantFrom("[", '{"a":'))
  .map(([d, balanced, open]): Line => {
    const close = open === "[" ? "]" : "}";
    const inner = open === "[" ? "1" : "1";
    return { bytes: utf8(open.repeat(d) + inner + (balanced ? close.repeat(d) : "")) };
  });

const randomBytes = fc.uint8Array({ minLength: 1, maxLength: 300 }).map((b): Line => ({ bytes: Buffer.from(b) }));

/** HTTP request text sent where NDJSON is spoken: each non-blank line is a frame. */
const httpInNdjson = fc.constant<Line>({
  bytes: utf8("POST /v1/invoke HTTP/1.1\r\nHost: aip\r\nContent-Length: 2\r\n\r\n{}"),
});

export const lineArb: fc.Arbitrary<Line> = fc.oneof(
  { arbitrary: request, weight: 30 },
  { arbitrary: anyJson, weight: 20 },
  { arbitrary: truncated, weight: 15 },
  { arbitrary: brokenUtf8, weight: 10 },
  { arbitrary: deep, weight: 5 },
  { arbitrary: randomBytes, weight: 15 },
  { arbitrary: httpInNdjson, weight: 2 },
);

const BLANK = new Set([0x20, 0x09, 0x0d, 0x0a]);

/** Frames the server must answer in `payload`: non-blank newline-separated pieces (the last one may be unterminated). */
export function framesIn(payload: Buffer): number {
  let frames = 0;
  let blank = true;
  for (const b of payload) {
    if (b === 0x0a) {
      if (!blank) frames++;
      blank = true;
    } else if (!BLANK.has(b)) blank = false;
  }
  return blank ? frames : frames + 1;
}

/** Bogus HTTP: starts like a request (an uppercase letter), then goes wrong. */
export const bogusHttpArb: fc.Arbitrary<Buffer> = fc.oneof(
  fc
    .tuple(
      fc.constantFrom("GET", "POST", "PUT", "DELETE", "BREW", "P0ST"),
      fc.string({ maxLength: 40 }),
      fc.string({ maxLength: 200 }),
    )
    .map(([m, path, rest]) => utf8(`${m} /${path} HTTP/1.1\r\n${rest}\r\n\r\n`)),
  fc
    .tuple(fc.integer({ min: -5, max: 1_000_000_000 }), fc.string({ maxLength: 50 }))
    .map(([len, body]) => utf8(`POST /v1/invoke HTTP/1.1\r\nHost: aip\r\nContent-Length: ${len}\r\n\r\n${body}`)),
  fc
    .string({ maxLength: 100 })
    .map((s) => utf8(`POST /v1/invoke HTTP/1.1\r\nHost: aip\r\nTransfer-Encoding: chunked\r\n\r\n${s}`)),
  fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.concat([utf8("G"), Buffer.from(b)])),
  fc.constant(utf8(`POST /v1/invoke HTTP/1.1\r\nHost: aip\r\n${"X-Big: " + "a".repeat(20_000)}\r\n\r\n`)),
  fc.constant(utf8("POST /v1/invoke HTTP/9.9\r\n\r\n")),
  fc.constant(utf8("POST /v1/invoke HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n{}")),
);
