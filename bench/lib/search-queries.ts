/** The search benchmarks' queries over the generated workspace (bench/generate.ts): identifiers and words. */
export const SEARCH_QUERIES = [
  "socket parser",
  "open buffer",
  "health metric options",
  "makeRetry",
  "trace config notes",
  "queue limit",
  "render stream close",
  "router_cache",
  "token 42",
  "config name",
] as const;
