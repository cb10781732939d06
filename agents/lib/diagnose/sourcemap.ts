/**
 * Source maps (version 3) for frames in built output (`dist/x.js` → `src/x.ts`): the map named by the
 * file's `//# sourceMappingURL=` comment (a file beside it or a `data:` URL), read through the
 * race-free reader; a map that does not parse, or whose source lies outside the workspace, is an
 * answer with its reason, never an exception.
 */
import { dirname, resolve } from "node:path";
import { isInside } from "../../../protocol/util/paths.js";
import { containedPath, readContained } from "../code/workspace.js";

/** Largest source map read (bytes). */
export const MAX_SOURCE_MAP_BYTES = 8 * 1024 * 1024;

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const DIGIT = new Int8Array(128).fill(-1);
for (let i = 0; i < B64.length; i++) DIGIT[B64.charCodeAt(i)] = i;

/** One mapping segment: generated column, source index, original line (0-based), original column. */
type Segment = [number, number, number, number];

export interface SourceMap {
  sources: string[];
  /** Per generated line (0-based), its segments sorted by generated column. */
  lines: Segment[][];
}

/** Decode a map's JSON; a string error when it is not a version 3 map with mappings. */
export function decodeSourceMap(json: string): SourceMap | string {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (err) {
    return `it does not parse as JSON (${(err as Error).message})`;
  }
  const m = raw as { version?: unknown; sources?: unknown; mappings?: unknown; sourceRoot?: unknown };
  if (m.version !== 3 || !Array.isArray(m.sources) || typeof m.mappings !== "string")
    return "it is not a version 3 source map with sources and mappings";
  const root = typeof m.sourceRoot === "string" && m.sourceRoot !== "" ? m.sourceRoot.replace(/\/?$/, "/") : "";
  const sources = m.sources.map((s) => (typeof s === "string" ? root + s : ""));
  const lines: Segment[][] = [];
  let src = 0;
  let oLine = 0;
  let oCol = 0;
  for (const text of m.mappings.split(";")) {
    const segs: Segment[] = [];
    let gCol = 0;
    for (const seg of text.split(",")) {
      if (seg === "") continue;
      const v: number[] = [];
      let value = 0;
      let shift = 0;
      for (let i = 0; i < seg.length; i++) {
        const d = DIGIT[seg.charCodeAt(i) & 127] ?? -1;
        if (d < 0 || seg.charCodeAt(i) > 127) return "its mappings are not base64 VLQ";
        value += (d & 31) << shift;
        if (d & 32) shift += 5;
        else {
          v.push(value & 1 ? -(value >>> 1) : value >>> 1);
          value = 0;
          shift = 0;
        }
      }
      gCol += v[0] ?? 0;
      if (v.length >= 4) {
        src += v[1]!;
        oLine += v[2]!;
        oCol += v[3]!;
        segs.push([gCol, src, oLine, oCol]);
      }
    }
    segs.sort((a, b) => a[0] - b[0]);
    lines.push(segs);
  }
  return { sources, lines };
}

/** The original position of generated (1-based line, 0-based column): the last segment at or before the column. */
export function originalPosition(
  map: SourceMap,
  line: number,
  column: number,
): { source: string; line: number; column: number } | undefined {
  const segs = map.lines[line - 1];
  if (!segs || segs.length === 0) return undefined;
  let best: Segment | undefined;
  for (const s of segs) {
    if (s[0] <= column) best = s;
    else break;
  }
  best ??= segs[0]!;
  const source = map.sources[best[1]];
  if (source === undefined || source === "") return undefined;
  return { source, line: best[2] + 1, column: best[3] };
}

export type Mapped =
  { ok: true; file: string; line: number; column: number; map: string } | { ok: false; reason: string };

/**
 * Map a frame in `jsPath` (a real path inside `root`) through its source map. `cache` holds the maps
 * read for one request.
 */
export async function mapThrough(
  root: string,
  jsPath: string,
  line: number,
  column: number,
  cache: Map<string, Promise<{ map: SourceMap; dir: string; name: string } | string>>,
): Promise<Mapped> {
  let entry = cache.get(jsPath);
  if (!entry) {
    entry = loadMap(root, jsPath);
    cache.set(jsPath, entry);
  }
  const loaded = await entry;
  if (typeof loaded === "string") return { ok: false, reason: loaded };
  const pos = originalPosition(loaded.map, line, column);
  if (!pos) return { ok: false, reason: `its source map (${loaded.name}) has no mapping for line ${line}` };
  const source = pos.source.replace(/^(?:webpack|file):\/\/[^/]*/, "");
  const abs = resolve(loaded.dir, source);
  if (!isInside(root, abs))
    return {
      ok: false,
      reason: `its source map (${loaded.name}) points outside the workspace (${pos.source}); not read`,
    };
  return { ok: true, file: abs, line: pos.line, column: pos.column, map: loaded.name };
}

async function loadMap(root: string, jsPath: string): Promise<{ map: SourceMap; dir: string; name: string } | string> {
  let js: string;
  try {
    js = (await readContained(root, jsPath, { maxBytes: MAX_SOURCE_MAP_BYTES })).text;
  } catch (err) {
    return `it could not be read (${(err as Error).message})`;
  }
  const url = /\/\/[#@] sourceMappingURL=(\S+)\s*$/.exec(js.slice(-16_384))?.[1];
  if (!url) return "it has no sourceMappingURL comment (built without source maps)";
  if (url.startsWith("data:")) {
    const m = /^data:application\/json(?:;charset=[\w-]+)?;base64,(.*)$/.exec(url);
    if (!m) return "its inline source map is not base64 JSON";
    const map = decodeSourceMap(Buffer.from(m[1]!, "base64").toString("utf8"));
    return typeof map === "string"
      ? `its inline source map is unusable: ${map}`
      : { map, dir: dirname(jsPath), name: "inline" };
  }
  let mapPath: string;
  try {
    mapPath = await containedPath(root, resolve(dirname(jsPath), decodeURIComponent(url)));
  } catch {
    return `its source map ${url} is missing or outside the workspace; not read`;
  }
  let text: string;
  try {
    text = (await readContained(root, mapPath, { maxBytes: MAX_SOURCE_MAP_BYTES })).text;
  } catch (err) {
    return `its source map ${url} could not be read (${(err as Error).message})`;
  }
  const map = decodeSourceMap(text);
  return typeof map === "string"
    ? `its source map ${url} is unusable: ${map}`
    : { map, dir: dirname(mapPath), name: url };
}
