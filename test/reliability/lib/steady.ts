/** Well-behaved clients: a few keep-alive workers sending valid requests until stopped, counting what they get. */
import { Pool } from "undici";

export interface Steady {
  stop(): Promise<{ ok: number; failed: number; failures: string[] }>;
}

export function steadyClients(socketPath: string, workers: number): Steady {
  const pool = new Pool("http://aip", { socketPath, connections: workers });
  let running = true;
  let ok = 0;
  const failures: string[] = [];
  const body = JSON.stringify({
    action: "echo",
    context: { source_code: "a\nb" },
    constraints: { timeout_ms: 10_000 },
  });
  const worker = async (): Promise<void> => {
    while (running) {
      try {
        const res = await pool.request({
          path: "/v1/invoke",
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
          headersTimeout: 15_000,
          bodyTimeout: 15_000,
        });
        const json = (await res.body.json()) as { status?: string; error?: { type?: string } };
        if (json.status === "success") ok++;
        else failures.push(json.error?.type ?? "unknown");
      } catch (err) {
        failures.push((err as Error).message);
      }
    }
  };
  const all = Promise.all(Array.from({ length: workers }, worker));
  return {
    async stop() {
      running = false;
      await all;
      await pool.destroy();
      return { ok, failed: failures.length, failures: failures.slice(0, 5) };
    },
  };
}
