/** Load shapes: closed loop at a fixed concurrency, bursts, and an open loop at a fixed rate. */
import { performance } from "node:perf_hooks";
import type { Client } from "./clients.js";
import { summarize, type LatencySummary } from "./stats.js";

export type BodyFactory = () => string;

interface Tally {
  latencies: number[];
  errors: number;
}

async function timed(client: Client, body: string, tally: Tally): Promise<void> {
  const t = performance.now();
  let ok = false;
  try {
    ok = await client.send(body);
  } catch {
    ok = false;
  }
  if (ok) tally.latencies.push(performance.now() - t);
  else tally.errors++;
}

/** `concurrency` workers, each sending its next request as soon as the previous one is answered, for `durationMs`. */
export async function closedLoop(
  client: Client,
  concurrency: number,
  durationMs: number,
  body: BodyFactory,
): Promise<LatencySummary> {
  const tally: Tally = { latencies: [], errors: 0 };
  const start = performance.now();
  const end = start + durationMs;
  const worker = async (): Promise<void> => {
    while (performance.now() < end) await timed(client, body(), tally);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return summarize(tally.latencies, tally.errors, (performance.now() - start) / 1000);
}

/**
 * Bursts: `size` requests at once, wait until all are answered, stay quiet for `gapMs`, again,
 * for `durationMs`. Idle gaps let a pool shrink, so each burst hits it cold (the seed's scenario).
 */
export async function bursts(
  client: Client,
  size: number,
  gapMs: number,
  durationMs: number,
  body: BodyFactory,
): Promise<LatencySummary> {
  const tally: Tally = { latencies: [], errors: 0 };
  const start = performance.now();
  let busy = 0;
  while (performance.now() - start < durationMs) {
    const t = performance.now();
    await Promise.all(Array.from({ length: size }, () => timed(client, body(), tally)));
    busy += performance.now() - t;
    await new Promise((r) => setTimeout(r, gapMs));
  }
  return summarize(tally.latencies, tally.errors, busy / 1000);
}

/** Open loop: one request every 1000/rate ms regardless of answers, for `durationMs`; then wait for the stragglers. */
export async function openLoop(
  client: Client,
  rate: number,
  durationMs: number,
  body: BodyFactory,
): Promise<LatencySummary> {
  const tally: Tally = { latencies: [], errors: 0 };
  const start = performance.now();
  const pending: Promise<void>[] = [];
  const total = Math.max(1, Math.round((rate * durationMs) / 1000));
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    pending.push(timed(client, body(), tally));
  }
  await Promise.all(pending);
  return summarize(tally.latencies, tally.errors, (performance.now() - start) / 1000);
}
