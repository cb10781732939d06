/**
 * Fair turns on the event loop (protocol/transport/turns.ts): a connection's first small request in a turn runs at
 * once; the rest, and large requests, wait for their turn; the connection that used the least time goes
 * first; a large request gives the loop back before the next one runs. Over real sockets: a cheap
 * connection's requests keep being answered while another connection floods expensive ones.
 */
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { successResponse } from "../../../protocol/contract/envelope.js";
import { AipServer } from "../../../protocol/transport/server.js";
import { FairTurns } from "../../../protocol/transport/turns.js";
import { ndjsonExchange } from "../../../protocol/transport/client.js";
import { ndjsonSession, tempDir, type NdjsonSession } from "../../helpers.js";

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Hold the thread for `ms` (what decoding a large request does). */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // spin
  }
}

/**
 * After a small request ran, a large request that holds the thread `workMs` and a second large one
 * waiting: how long after the first one's answer the second started.
 */
async function gapAfterLarge(turns: FairTurns, workMs: number): Promise<number> {
  let answered = 0;
  let started = 0;
  await turns.run(
    9,
    10,
    () => Promise.resolve(),
    () => undefined,
  );
  const first = turns.run(
    1,
    5000,
    () => {
      busy(workMs);
      answered = performance.now();
      return Promise.resolve();
    },
    () => undefined,
  );
  const second = turns.run(
    2,
    5000,
    () => {
      started = performance.now();
      return Promise.resolve();
    },
    () => undefined,
  );
  await Promise.all([first, second]);
  return started - answered;
}

/** Connection `small` runs a small request, then connection `busyOne` one that holds the thread `ms`. */
async function smallThenBusy(turns: FairTurns, small: number, busyOne: number, ms: number): Promise<void> {
  await turns.run(
    small,
    10,
    () => Promise.resolve(),
    () => undefined,
  );
  await turns.run(
    busyOne,
    10,
    () => {
      busy(ms);
      return Promise.resolve();
    },
    () => undefined,
  );
}

describe("FairTurns", () => {
  it("runs a connection's first small request in a turn at once, and its next one later", async () => {
    const turns = new FairTurns();
    const ran: string[] = [];
    const job = (name: string) => () => {
      ran.push(name);
      return Promise.resolve(name);
    };
    const first = turns.run(1, 100, job("a1"), () => "cancelled");
    const second = turns.run(1, 100, job("a2"), () => "cancelled");
    const other = turns.run(2, 100, job("b1"), () => "cancelled");
    // a1 and b1 ran synchronously, each its connection's first in this turn; a2 waits for the turn to end.
    expect(ran).toEqual(["a1", "b1"]);
    expect(turns.stats()).toEqual({ queued: 1, deferred: 1 });
    expect(await Promise.all([first, second, other])).toEqual(["a1", "a2", "b1"]);
    expect(ran).toEqual(["a1", "b1", "a2"]);
    // In the next turn, the connection's first request runs at once again.
    await nextTurn();
    void turns.run(1, 100, job("a3"), () => "cancelled");
    expect(ran.at(-1)).toBe("a3");
  });

  it("never runs a large request at once", async () => {
    const turns = new FairTurns({ bigBytes: 1000 });
    const ran: string[] = [];
    const done = turns.run(
      1,
      1000,
      () => {
        ran.push("big");
        return Promise.resolve();
      },
      () => undefined,
    );
    expect(ran).toEqual([]);
    await done;
    expect(ran).toEqual(["big"]);
  });

  it("serves waiting connections least-used first", async () => {
    const turns = new FairTurns();
    const ran: string[] = [];
    const job =
      (name: string, ms = 0) =>
      () => {
        busy(ms);
        ran.push(name);
        return Promise.resolve();
      };
    // Connection 1 has used 100 ms of the thread, connection 2 almost nothing (a margin wider than any
    // descheduling of "light" on a loaded machine).
    void turns.run(1, 10, job("heavy", 100), () => undefined);
    void turns.run(2, 10, job("light"), () => undefined);
    // Both queue more in the same turn: connection 1 queued first, connection 2 goes first.
    const waits = [
      turns.run(1, 10, job("heavy-2"), () => undefined),
      turns.run(1, 10, job("heavy-3"), () => undefined),
      turns.run(2, 10, job("light-2"), () => undefined),
    ];
    await Promise.all(waits);
    expect(ran).toEqual(["heavy", "light", "light-2", "heavy-2", "heavy-3"]);
  });

  it("gives the loop back after each large request: I/O that came meanwhile runs before the next", async () => {
    const turns = new FairTurns({ bigBytes: 1000 });
    const ran: string[] = [];
    const big = (name: string) => () => {
      ran.push(name);
      // What arrives while this request holds the thread is handled in the loop's next turn.
      setImmediate(() => ran.push(`after ${name}`));
      return Promise.resolve();
    };
    await Promise.all([
      turns.run(1, 5000, big("big-1"), () => undefined),
      turns.run(1, 5000, big("big-2"), () => undefined),
    ]);
    await nextTurn();
    expect(ran).toEqual(["big-1", "after big-1", "big-2", "after big-2"]);
  });

  it("answers a closed connection's waiting requests with their cancelled result, never running them", async () => {
    const turns = new FairTurns();
    const ran: string[] = [];
    void turns.run(
      7,
      10,
      () => {
        ran.push("first");
        return Promise.resolve("ok");
      },
      () => "cancelled",
    );
    const waiting = turns.run(
      7,
      10,
      () => {
        ran.push("second");
        return Promise.resolve("ok");
      },
      () => "cancelled",
    );
    turns.close(7);
    expect(await waiting).toBe("cancelled");
    await nextTurn();
    expect(ran).toEqual(["first"]);
    expect(turns.stats().queued).toBe(0);
  });

  it("beside another connection's request in flight, starts at most its share of a pipeline's requests", async () => {
    const turns = new FairTurns({ sharedInflight: 4, sliceMs: 1000 }); // a slice a loaded machine never ends early
    const answers: (() => void)[] = [];
    let inflight = 0;
    let most = 0;
    const pending = () => () => {
      inflight++;
      most = Math.max(most, inflight);
      return new Promise<void>((resolve) =>
        answers.push(() => {
          inflight--;
          resolve();
        }),
      );
    };
    // Connection 2 has a request started and unanswered; connection 1 pipelines 10.
    let answerOther: () => void = () => undefined;
    const other = turns.run(
      2,
      10,
      () => new Promise<void>((resolve) => (answerOther = resolve)),
      () => undefined,
    );
    const pipeline = Array.from({ length: 10 }, () => turns.run(1, 10, pending(), () => undefined));
    for (let i = 0; i < 5; i++) await nextTurn();
    // Two connections active: floor(4 / 2) = 2 each; the rest wait for an answer, not for a turn.
    expect(inflight).toBe(2);
    expect(turns.stats().queued).toBe(8);
    answers.shift()!();
    for (let i = 0; i < 5; i++) await nextTurn();
    expect(inflight).toBe(2);
    // The other connection answered: alone, the pipeline goes as far as it likes.
    answerOther();
    await other;
    answers.shift()!();
    for (let i = 0; i < 5; i++) await nextTurn();
    expect(inflight).toBe(8);
    expect(turns.stats().queued).toBe(0);
    while (answers.length > 0) answers.shift()!();
    await Promise.all(pipeline);
    expect(most).toBe(8);
  });

  it("paces a connection far ahead of another active one: one waiting request per paceMs", async () => {
    const turns = new FairTurns({ paceMs: 30, activeMs: 60_000 });
    const starts: number[] = [];
    const ran: string[] = [];
    // Connection 2 ran a cheap request; connection 1 ran one that held the thread 20 ms.
    await smallThenBusy(turns, 2, 1, 20);
    await nextTurn();
    const job = (name: string) => () => {
      starts.push(performance.now());
      ran.push(name);
      return Promise.resolve();
    };
    const waits = [job("h1"), job("h2"), job("h3")].map((j) => turns.run(1, 10, j, () => undefined));
    setImmediate(() => ran.push("tick"));
    await Promise.all(waits);
    // h1 ran at once (its first in this turn); h2 and h3 not one after the other in the next drain:
    // each waited for its pace (a timer never fires early; 1 ms of rounding).
    expect(ran.indexOf("tick")).toBeLessThan(ran.indexOf("h2"));
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(29);
  });

  it("does not pace a connection when no other connection ran a request lately", async () => {
    const turns = new FairTurns({ paceMs: 30, activeMs: 1, sliceMs: 1000 }); // a slice a loaded machine never ends early
    const ran: string[] = [];
    await smallThenBusy(turns, 2, 1, 20);
    // Connection 2's last request is more than activeMs ago (connection 1's held the thread 20 ms since).
    const job = (name: string) => () => {
      ran.push(name);
      return Promise.resolve();
    };
    const waits = [job("h1"), job("h2"), job("h3")].map((j) => turns.run(1, 10, j, () => undefined));
    setImmediate(() => ran.push("tick"));
    await Promise.all(waits);
    // The three in the next drain, one after the other, before the loop's next turn (the tick).
    expect(ran).toEqual(["h1", "h2", "h3"]);
  });

  it("cost classes: a waiting small request starts before a waiting large one, though its connection is charged more", async () => {
    const turns = new FairTurns({ bigBytes: 1000, paceMs: 0 });
    const ran: string[] = [];
    const job =
      (name: string, ms = 0) =>
      () => {
        if (ms > 0) busy(ms);
        ran.push(name);
        return Promise.resolve();
      };
    // Connection 2 is charged 5 ms; connection 1 nothing.
    await turns.run(2, 10, job("warm", 5), () => undefined);
    await nextTurn();
    const waits = [
      turns.run(1, 5000, job("large"), () => undefined),
      turns.run(2, 10, job("small-1"), () => undefined), // its first in this turn: at once
      turns.run(2, 10, job("small-2"), () => undefined), // waits, beside the large one
    ];
    await Promise.all(waits);
    // Least charged first would have started the large request before small-2.
    expect(ran).toEqual(["warm", "small-1", "small-2", "large"]);
  });

  it("cost classes: while small requests are served, large ones start bigPaceMsPerMiB after the one before, the longest waiting first", async () => {
    // 1,024 bytes: a 30 ms pace.
    const turns = new FairTurns({ bigBytes: 1000, bigPaceMsPerMiB: 30 * 1024, activeMs: 60_000, paceMs: 0 });
    const ran: string[] = [];
    const starts: number[] = [];
    const job = (name: string) => () => {
      starts.push(performance.now());
      ran.push(name);
      return Promise.resolve();
    };
    // A small request ran (connection 9); connection 1 is charged (it keeps its connection), 2 and 3 are new.
    await smallThenBusy(turns, 9, 1, 5);
    await nextTurn();
    const waits = [1, 2, 3].map((c) => turns.run(c, 1024, job(`large-${c}`), () => undefined));
    await Promise.all(waits);
    // Oldest first: the charged connection's large request is not put behind the new connections'.
    expect(ran).toEqual(["large-1", "large-2", "large-3"]);
    // Each waited for the pace after the one before it (a timer never fires early; 1 ms of rounding).
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(29);
  });

  it("cost classes: while small requests are served, large ones take at most bigShare of the time", async () => {
    // A quarter: the next large request starts no sooner than 3 times the last one took after its answer.
    const turns = new FairTurns({ bigBytes: 1000, bigPaceMsPerMiB: 0, bigShare: 0.25, activeMs: 60_000, paceMs: 0 });
    // 20 ms of work: 60 ms before the next (a timer never fires early; 1 ms of rounding).
    expect(await gapAfterLarge(turns, 20)).toBeGreaterThanOrEqual(59);
  });

  it("cost classes: the share's pace is at most bigMaxPaceMs, however long the last large request took", async () => {
    // 1 %: 20 ms of work would hold the next one 1,980 ms; the cap is 40 ms.
    const turns = new FairTurns({
      bigBytes: 1000,
      bigPaceMsPerMiB: 0,
      bigShare: 0.01,
      bigMaxPaceMs: 40,
      activeMs: 60_000,
      paceMs: 0,
    });
    const gap = await gapAfterLarge(turns, 20);
    expect(gap).toBeGreaterThanOrEqual(39);
    expect(gap).toBeLessThan(1000);
  });

  it("cost classes: while small requests are served, one large request at a time is started and unanswered", async () => {
    const turns = new FairTurns({ bigBytes: 1000, bigPaceMsPerMiB: 0, activeMs: 60_000, paceMs: 0 });
    const ran: string[] = [];
    let answerFirst: () => void = () => undefined;
    await turns.run(
      9,
      10,
      () => Promise.resolve(),
      () => undefined,
    ); // a small request ran
    const first = turns.run(
      1,
      5000,
      () => {
        ran.push("large-1");
        return new Promise<void>((resolve) => (answerFirst = resolve));
      },
      () => undefined,
    );
    const second = turns.run(
      2,
      5000,
      () => {
        ran.push("large-2");
        return Promise.resolve();
      },
      () => undefined,
    );
    const small = turns.run(
      3,
      10,
      () => {
        ran.push("small");
        return Promise.resolve();
      },
      () => undefined,
    );
    for (let i = 0; i < 10; i++) await nextTurn();
    // The first large request is in flight: the second waits for its answer, the small one does not.
    expect(ran).toEqual(["small", "large-1"]);
    answerFirst();
    await Promise.all([first, second, small]);
    expect(ran).toEqual(["small", "large-1", "large-2"]);
  });

  it("cost classes: with no small request lately, large ones are not paced", async () => {
    const turns = new FairTurns({ bigBytes: 1000, bigPaceMsPerMiB: 60_000 * 1024, activeMs: 1, paceMs: 0 });
    const ran: string[] = [];
    await turns.run(
      9,
      10,
      () => {
        busy(5); // the small request is more than activeMs ago when the large ones wait
        return Promise.resolve();
      },
      () => undefined,
    );
    const waits = [1, 2, 3].map((c) =>
      turns.run(
        c,
        1024,
        () => {
          ran.push(`large-${c}`);
          return Promise.resolve();
        },
        () => undefined,
      ),
    );
    // One large request per drain, a drain per turn of the loop: three turns, not three minute-long paces.
    for (let i = 0; i < 5 && ran.length < 3; i++) await nextTurn();
    expect(ran).toEqual(["large-1", "large-2", "large-3"]);
    await Promise.all(waits);
  });
});

describe("fair turns between connections over real sockets", () => {
  const opened: { server?: AipServer; flood?: Socket; cheap?: NdjsonSession; cleanup?: () => void } = {};
  afterEach(async () => {
    opened.flood?.destroy();
    opened.cheap?.close();
    await opened.server?.close(100);
    opened.cleanup?.();
  });

  it("a cheap connection is answered between a few of a flooding connection's expensive requests", async () => {
    const { dir, cleanup } = tempDir();
    opened.cleanup = cleanup;
    /** Whose request the server handled, in order. */
    const handled: string[] = [];
    const server = await AipServer.listen({
      socketPath: join(dir, "s.sock"),
      invoke: async (req) => {
        const { context, trace_id: trace } = req as { context: { who: string }; trace_id?: string };
        const who = context.who;
        // Each of the flood's requests holds the thread (what decoding a large request does).
        if (who === "flood") busy(0.5);
        handled.push(who);
        return successResponse({}, trace ?? "t");
      },
    });
    opened.server = server;
    // One connection pipelines 3,000 expensive requests in one write and reads every answer.
    const line = `${JSON.stringify({ action: "echo", context: { who: "flood" }, constraints: {} })}\n`;
    const flood = connect(server.socketPath, () => flood.write(line.repeat(3000)));
    opened.flood = flood;
    flood.on("data", () => undefined);
    flood.on("error", () => undefined);
    while (handled.length < 100) await nextTurn();

    // Another connection sends 20 cheap requests, one after the other.
    const cheap = await ndjsonSession(server.socketPath);
    opened.cheap = cheap;
    for (let i = 0; i < 20; i++) {
      const answer = await cheap.send({
        action: "echo",
        trace_id: `cheap-${i}`,
        context: { who: "cheap" },
        constraints: {},
      });
      expect(answer.status).toBe("success");
    }
    const firstCheap = handled.indexOf("cheap");
    const between: number[] = [];
    let run = 0;
    for (const who of handled.slice(firstCheap + 1)) {
      if (who === "cheap") {
        between.push(run);
        run = 0;
      } else run++;
    }
    expect(between).toHaveLength(19);
    // Taking 64 lines a turn, the flood would run 64 or more requests between two cheap ones; in
    // fair turns it gets one at once and a slice of 2 ms per turn, and paced (it leads the cheap
    // connection by far) one request per 5 ms while the cheap one is active.
    expect(Math.max(...between), `flood requests between cheap ones: ${between.join(" ")}`).toBeLessThanOrEqual(24);
    expect(handled.filter((w) => w === "flood").length).toBeLessThan(3000);
    // The flood is not starved: once the cheap connection is quiet it has the thread again.
    const floodAfter = handled.length;
    while (handled.length < floodAfter + 200) await nextTurn();
  });

  it("large requests beside small ones: a client keeping its connection is not starved by one opening a connection per request", async () => {
    const { dir, cleanup } = tempDir();
    opened.cleanup = cleanup;
    const handled: string[] = [];
    const server = await AipServer.listen({
      socketPath: join(dir, "s.sock"),
      invoke: async (req) => {
        const { context, trace_id: trace } = req as { context: { who: string }; trace_id?: string };
        if (context.who !== "small") busy(0.5); // a large request costs its connection a charge
        handled.push(context.who);
        return successResponse({}, trace ?? "t");
      },
    });
    opened.server = server;
    // 128 KiB requests: large (TURN_BIG_BYTES), paced about 6 ms apart while the small client is served.
    const large = (who: string, i: number): Record<string, unknown> & { trace_id: string } => ({
      action: "echo",
      trace_id: `${who}-${i}`,
      context: { who, source_code: "a".repeat(128 * 1024) },
      constraints: {},
    });
    const count = (who: string): number => handled.filter((w) => w === who).length;
    const done = (): boolean => count("kept") + count("fresh") >= 30;
    const kept = await ndjsonSession(server.socketPath);
    const small = await ndjsonSession(server.socketPath);
    opened.cheap = small;
    const loops = [
      (async () => {
        for (let i = 0; !done(); i++) expect((await kept.send(large("kept", i))).status).toBe("success");
        kept.close();
      })(),
      (async () => {
        for (let i = 0; !done(); i++) {
          const [answer] = await ndjsonExchange(server.socketPath, `${JSON.stringify(large("fresh", i))}\n`, {
            timeoutMs: 30_000,
          });
          expect((JSON.parse(answer!) as { status: string }).status).toBe("success");
        }
      })(),
      (async () => {
        for (let i = 0; !done(); i++)
          expect(
            (await small.send({ action: "echo", trace_id: `small-${i}`, context: { who: "small" }, constraints: {} }))
              .status,
          ).toBe("success");
      })(),
    ];
    await Promise.all(loops);
    // The longest waiting large request starts first: each client gets about half of them (least
    // charged first gave the kept connection 4 of 75, every fresh connection being uncharged).
    expect(count("kept"), handled.filter((w) => w !== "small").join(" ")).toBeGreaterThanOrEqual(10);
    expect(count("fresh")).toBeGreaterThanOrEqual(10);
    expect(count("small")).toBeGreaterThan(0);
  });
});
