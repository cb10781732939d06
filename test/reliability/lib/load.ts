/**
 * Fault load: N closed-loop clients over keep-alive HTTP, each request with a deadline, every outcome
 * recorded. "answered": a valid AIP-1 envelope (success or error) within deadline + grace. "refused":
 * the connection could not be opened (nothing was sent). After a failure a client backs off
 * (20 ms, doubling to 640 ms while failures go on), as a well-behaved client does.
 * "lost": sent, and no envelope came within deadline + grace.
 */
import { Pool } from "undici";
import { ResponseSchema } from "../../../protocol/contract/schemas.js";

export const DEADLINE_MS = 2000;
export const GRACE_MS = 1500;

export interface Outcome {
  trace: string;
  sentAt: number;
  doneAt: number;
  kind: "success" | "error" | "refused" | "lost";
  /** Error code (AIP_ERR_…) or, for refused/lost, the client-side cause. */
  code?: string;
}

const REFUSED = new Set(["ECONNREFUSED", "ENOENT"]);

export interface FaultLoad {
  outcomes: Outcome[];
  successes(): number;
  stop(): Promise<Outcome[]>;
}

export function faultLoad(socketPath: string, clients: number, prefix: string): FaultLoad {
  const pool = new Pool("http://aip", { socketPath, connections: clients, headersTimeout: 0, bodyTimeout: 0 });
  const outcomes: Outcome[] = [];
  let ok = 0;
  let n = 0;
  let running = true;
  /** Consecutive failures of each client drive its back-off: 20, 40, … 640 ms, reset by a success. */
  const pause = (streak: number): Promise<void> =>
    new Promise((r) => setTimeout(r, Math.min(640, 20 * 2 ** Math.min(streak, 5))));
  const one = async (): Promise<boolean> => {
    const trace = `${prefix}-${++n}`;
    const body = JSON.stringify({
      action: "echo",
      context: {},
      constraints: { timeout_ms: DEADLINE_MS, delay_ms: Math.floor(Math.random() * 30) },
      trace_id: trace,
    });
    const sentAt = Date.now();
    const record = (kind: Outcome["kind"], code?: string): void => {
      outcomes.push({ trace, sentAt, doneAt: Date.now(), kind, ...(code ? { code } : {}) });
    };
    try {
      const res = await pool.request({
        path: "/v1/invoke",
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
        signal: AbortSignal.timeout(DEADLINE_MS + GRACE_MS),
      });
      const text = await res.body.text();
      let parsed;
      try {
        parsed = ResponseSchema.safeParse(JSON.parse(text));
      } catch {
        parsed = undefined;
      }
      if (!parsed?.success || parsed.data.trace_id !== trace) {
        record("lost", `not an envelope for ${trace}: HTTP ${res.statusCode} ${text.slice(0, 80)}`);
        return false;
      }
      if (parsed.data.status === "success") {
        ok++;
        record("success");
        return true;
      }
      record("error", parsed.data.error.type);
      return false;
    } catch (err) {
      const code = (err as { code?: string }).code ?? (err as Error).name;
      record(REFUSED.has(code) ? "refused" : "lost", REFUSED.has(code) ? code : `${code}: ${(err as Error).message}`);
      return false;
    }
  };
  const worker = async (): Promise<void> => {
    let streak = 0;
    while (running) {
      if (await one()) streak = 0;
      else await pause(streak++);
    }
  };
  // Ramp up in waves of 20, each after the previous wave's answers (readiness, not time): 200 new
  // connections at once to a cold process on busy cores took seconds to be read, before any fault.
  const started: Promise<void>[] = [];
  const ramp = async (): Promise<void> => {
    for (let i = 0; i < clients && running; i += 20) {
      for (let j = i; j < Math.min(clients, i + 20); j++) started.push(worker());
      const want = ok + 20;
      while (running && ok < want) await new Promise((r) => setTimeout(r, 5));
    }
  };
  const all = ramp().then(() => Promise.all(started));
  return {
    outcomes,
    successes: () => ok,
    async stop() {
      running = false;
      await all;
      await pool.destroy();
      return outcomes;
    },
  };
}

export interface Tally {
  sent: number;
  answered: number;
  success: number;
  errors: Record<string, number>;
  refused: number;
  /** Sent on a connection the server closed before reading the request (not in `read`). */
  closed_unread: number;
  /**
   * The client's budget ran out, but the server read the request and answered it: the request waited
   * unread in the socket (a CPU-starved process), see `read`. Answers past their deadline are counted
   * apart within (`late_past_deadline`).
   */
  late: number;
  /** Longest such wait between sending and the server reading the request, ms. */
  late_max_unread_ms: number;
  /**
   * Of the late, those the server answered more than 50 ms past their deadline counted from reading them
   * (its deadline timer fired late: the process got no CPU), and the largest such overrun, ms.
   */
  late_past_deadline: number;
  deadline_overrun_max_ms: number;
  lost: number;
  /** Of the lost, those a server logged as read (answered after the client gave up, past the deadline). */
  lost_read: number;
  lost_causes: string[];
}

/** What the server logged for a request it read: when it received it (epoch ms) and how long it took. */
export interface ReadRecord {
  receivedAt: number;
  totalMs: number;
}

/** Count outcomes; `read`: requests the server logged (without it, every unanswered request is lost). */
export function tally(outcomes: Outcome[], read?: Map<string, ReadRecord>): Tally {
  const t: Tally = {
    sent: 0,
    answered: 0,
    success: 0,
    errors: {},
    refused: 0,
    closed_unread: 0,
    late: 0,
    late_max_unread_ms: 0,
    late_past_deadline: 0,
    deadline_overrun_max_ms: 0,
    lost: 0,
    lost_read: 0,
    lost_causes: [],
  };
  for (const o of outcomes) {
    if (o.kind === "refused") {
      t.refused++;
      continue;
    }
    t.sent++;
    if (o.kind === "lost" && read && !read.has(o.trace) && /^(UND_ERR_SOCKET|ECONNRESET|EPIPE)/.test(o.code ?? "")) {
      t.closed_unread++;
      continue;
    }
    const r = o.kind === "lost" ? read?.get(o.trace) : undefined;
    if (r && o.code?.includes("timeout")) {
      t.late++;
      t.late_max_unread_ms = Math.max(t.late_max_unread_ms, Math.round(r.receivedAt - o.sentAt));
      // Answered, but past its deadline: the deadline's timer fired late in a starved process.
      if (r.totalMs > DEADLINE_MS + 50) {
        t.late_past_deadline++;
        t.deadline_overrun_max_ms = Math.max(t.deadline_overrun_max_ms, Math.round(r.totalMs - DEADLINE_MS));
      }
      continue;
    }
    if (o.kind === "lost") {
      t.lost++;
      // Whether a server read it (and when, and how long it took) is what tells a lost request's story.
      const seen = read?.get(o.trace);
      if (seen) t.lost_read++;
      const story = seen
        ? `read ${Math.round(seen.receivedAt - o.sentAt)} ms after it was sent, answered in ${Math.round(seen.totalMs)} ms`
        : "never read";
      if (t.lost_causes.length < 5)
        t.lost_causes.push(
          `${o.trace} (sent ${o.sentAt}, gave up after ${o.doneAt - o.sentAt} ms, ${story}): ${o.code}`,
        );
      continue;
    }
    t.answered++;
    if (o.kind === "success") t.success++;
    else t.errors[o.code!] = (t.errors[o.code!] ?? 0) + 1;
  }
  return t;
}
