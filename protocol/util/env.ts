/**
 * Every `AIP_*` environment variable agency reads, in one registry, read and validated by one set of
 * rules: a value that is set but not valid is an error naming the variable (`EnvError`), never a
 * silent fallback. The orchestrator checks its whole environment at start (`checkEnv`), and so does
 * each agent's runtime, since agents are separate executables that read some variables themselves;
 * this module lives in protocol/util/ so that both may import it.
 *
 * docs/operations.md ("Environment variables") holds the table `envTable()` makes from this registry;
 * test/protocol/util/env.test.ts keeps the two in sync and fails on an `AIP_*` name read in the sources
 * that is not registered here.
 *
 * Adding a variable is one entry in `ENV_VARS` (name, kind, who reads it, default, what it does); read
 * it with `envString`, `envInt`, `envFlag` or `envList`, and paste the table the sync test prints into
 * docs/operations.md.
 */

/**
 * Who reads a variable: the orchestrator (`aip up`), every agent, the `aip` CLI, `npm install`'s
 * scripts (scripts/gpu-builds.mjs, plain JavaScript that runs before the build), benchmarks, tests.
 */
export type EnvScope = "orchestrator" | "agents" | "cli" | "install" | "bench" | "test" | "internal";

interface BaseVar {
  /** The processes that read it. */
  scope: readonly EnvScope[];
  /** The default, as the table shows it (computed defaults are described in words). */
  default: string;
  /** What it does, one line. */
  doc: string;
}

/** The kinds of value, each with its rule. */
export type EnvVar =
  | (BaseVar & { kind: "string" })
  | (BaseVar & { kind: "path" })
  | (BaseVar & { kind: "list" })
  | (BaseVar & { kind: "flag" })
  | (BaseVar & { kind: "enum"; values: readonly string[] })
  | (BaseVar & { kind: "int"; min: number; max: number; fallback?: number });

const O = ["orchestrator"] as const;
const A = ["agents"] as const;
const OA = ["orchestrator", "agents"] as const;
const OC = ["orchestrator", "cli"] as const;

/** The registry: every variable agency reads. */
export const ENV_VARS = {
  AIP_CONFIG: {
    kind: "path",
    scope: O,
    default: "manifests/agency.json",
    doc: "the agency config file (also `--config`)",
  },
  AIP_SOCKET: {
    kind: "path",
    scope: OC,
    default: "./run/aip.sock",
    doc: "the orchestrator's socket (config `socket`; also `--socket`)",
  },
  AIP_ADMIN_SOCKET: {
    kind: "path",
    scope: OC,
    default: "`<socket>` with `.admin.sock`",
    doc: "the admin socket (config `admin_socket`)",
  },
  AIP_AGENT_SOCKET_DIR: {
    kind: "path",
    scope: O,
    default: "`agents/` beside the socket",
    doc: "where agents' sockets go (config `agent_socket_dir`)",
  },
  AIP_MODE: {
    kind: "enum",
    values: ["embedded", "systemd"],
    scope: O,
    default: "embedded",
    doc: "start the agents, or connect to systemd's (config `mode`; also `--mode`)",
  },
  AIP_SOCKET_GROUP: {
    kind: "string",
    scope: O,
    default: "none (socket 0600)",
    doc: "a group makes the socket 0660 (config `socket_group`)",
  },
  AIP_HEALTH_HOST: {
    kind: "string",
    scope: O,
    default: "127.0.0.1",
    doc: "address of the probe port (config `health_host`)",
  },
  AIP_HEALTH_PORT: {
    kind: "int",
    min: 1,
    max: 65535,
    scope: O,
    default: "none",
    doc: "serve `/livez`, `/readyz`, `/healthz`, `/metrics` on this port (config `health_port`)",
  },
  AIP_STATE_DIR: {
    kind: "path",
    scope: O,
    default: "see `state_dir`",
    doc: "canary state and vetting cache (config `state_dir`)",
  },
  AIP_VETTING: {
    kind: "enum",
    values: ["required", "warn", "off"],
    scope: O,
    default: "warn embedded, required systemd",
    doc: "sandbox vetting of agents (config `vetting`)",
  },
  AIP_WORKSPACE_ROOTS_DEFAULTS: {
    kind: "enum",
    values: ["on", "off", "1", "0", "true", "false", "yes", "no"],
    scope: OA,
    default: "on",
    doc: "`off`: `AIP_WORKSPACE_ROOTS` and `workspace_roots` replace the default roots instead of adding to them",
  },
  AIP_WORKSPACE_ROOTS: {
    kind: "list",
    scope: OA,
    default: "your home and /tmp (embedded)",
    doc: "colon-separated roots a request's workspace must lie in (config `workspace_roots`)",
  },
  AIP_LOG_FILE: { kind: "path", scope: OA, default: "stdout", doc: "JSON Lines log file (also `--log`)" },
  AIP_LOG_LEVEL: {
    kind: "enum",
    values: ["trace", "debug", "info", "warn", "error", "fatal", "silent"],
    scope: OA,
    default: "info",
    doc: "log level, passed on to agents",
  },
  AIP_REQUEST_RECEIVE_TIMEOUT_MS: {
    kind: "int",
    min: 1,
    max: 3_600_000,
    scope: A,
    default: "30000",
    doc: "an agent's server: a request body still incomplete this long gets 408 (the orchestrator's: `limits.request_receive_timeout_ms`)",
  },
  AIP_MODEL: {
    kind: "path",
    scope: A,
    default: "unset (degraded)",
    doc: "the `.gguf` model of `complete` and `summarize`",
  },
  AIP_MODEL_THREADS: {
    kind: "int",
    min: 1,
    max: 256,
    scope: A,
    default: "half the cores, at most 4",
    doc: "inference threads",
  },
  AIP_MODEL_CONTEXT: {
    kind: "int",
    min: 256,
    max: 131072,
    fallback: 2048,
    scope: A,
    default: "2048",
    doc: "tokens per sequence (capped at the model's training context)",
  },
  AIP_MODEL_SEQUENCES: {
    kind: "int",
    min: 1,
    max: 64,
    scope: A,
    default: "`max_concurrent`",
    doc: "requests evaluated at once; more wait for a free one",
  },
  AIP_MODEL_GPU_LAYERS: {
    kind: "int",
    min: 0,
    max: 1000,
    fallback: 0,
    scope: A,
    default: "0",
    doc: "layers offloaded to a GPU",
  },
  AIP_MODEL_URL: {
    kind: "string",
    scope: A,
    default: "unset (local model)",
    doc: "an inference server's base URL (http or https) instead of `AIP_MODEL`",
  },
  AIP_MODEL_NAME: { kind: "string", scope: A, default: "—", doc: "the model the inference server serves" },
  AIP_MODEL_KEY_FILE: { kind: "path", scope: A, default: "none", doc: "a file holding the inference server's API key" },
  AIP_MODEL_FIM: {
    kind: "enum",
    values: ["openai-suffix", "llama-infill", "ollama", "template"],
    scope: A,
    default: "openai-suffix",
    doc: "how a fill-in-the-middle request is put to the inference server",
  },
  AIP_MODEL_FIM_TEMPLATE: {
    kind: "string",
    scope: A,
    default: "—",
    doc: "with `AIP_MODEL_FIM=template`: a model family or a template with {prefix} and {suffix}",
  },
  AIP_MODEL_TIMEOUT_MS: {
    kind: "int",
    min: 1,
    max: 600_000,
    fallback: 10_000,
    scope: A,
    default: "10000",
    doc: "cap on one inference-server request",
  },
  AIP_MODEL_STREAM: { kind: "flag", scope: A, default: "1", doc: "stream the inference server's answer" },
  AIP_TESTGEN_WARM: {
    kind: "flag",
    scope: A,
    default: "1",
    doc: "0: testgen starts a fresh test runner per file instead of the trusted workspace's warm one",
  },
  AIP_TESTGEN_WARM_POOL: {
    kind: "enum",
    values: ["auto", "own"],
    scope: A,
    default: "auto",
    doc: "own: the warm runner keeps the workspace's vitest pool instead of one kept test thread",
  },
  AIP_MODEL_CONNECTIONS: {
    kind: "int",
    min: 1,
    max: 256,
    scope: A,
    default: "`max_concurrent`",
    doc: "keep-alive connections to the inference server",
  },
  AIP_MODEL_CIRCUIT_FAILURES: {
    kind: "int",
    min: 1,
    max: 1000,
    fallback: 3,
    scope: A,
    default: "3",
    doc: "inference-server failures in a row that open its circuit",
  },
  AIP_MODEL_REPROBE_MS: {
    kind: "int",
    min: 1,
    max: 600_000,
    fallback: 1000,
    scope: A,
    default: "1000",
    doc: "first wait before probing an open circuit (doubles, up to 30 s)",
  },
  AIP_MODEL_CA_FILE: {
    kind: "path",
    scope: A,
    default: "system CAs",
    doc: "PEM of the CA of the inference server's certificate",
  },
  AIP_TRUSTED_WORKSPACES: {
    kind: "list",
    scope: OA,
    default: "none",
    doc: "workspaces whose code (test runners, configs) may run, in the sandbox: paths or globs, colon-separated; replaces the config's `trusted_workspaces`",
  },
  AIP_TRUSTED_WORKSPACES_SOURCE: {
    kind: "enum",
    values: ["config", "env"],
    scope: ["internal"],
    default: "set by the orchestrator",
    doc: "where the agents' trusted list came from",
  },
  AIP_TRUST_FILE: {
    kind: "path",
    scope: ["internal"],
    default: "set by the orchestrator",
    doc: "the file `aip trust` writes in the state dir, read by agents at each decision",
  },
  AIP_SANDBOX_HIDE: {
    kind: "list",
    scope: ["internal"],
    default: "set by the orchestrator",
    doc: "paths no sandboxed workspace run may see (state dir, socket directories)",
  },
  AIP_PYTHON: {
    kind: "path",
    scope: A,
    default: "/usr/bin/python3",
    doc: "the Python interpreter for pytest checks and pyright's site-packages (a virtualenv's `bin/python`); never one from the workspace",
  },
  AIP_WARMUP_KEYSTROKES: {
    kind: "int",
    min: 0,
    max: 100_000,
    fallback: 200,
    scope: A,
    default: "200",
    doc: "dry keystrokes of `complete`'s warm-up before it reports ready",
  },
  AIP_TYPED_MAX_WORKSPACES: {
    kind: "int",
    min: 1,
    max: 64,
    fallback: 3,
    scope: A,
    default: "3",
    doc: "workspaces with a live TypeScript service; the least recently used is closed",
  },
  AIP_TYPED_HEAP_MB: {
    kind: "int",
    min: 128,
    max: 16_384,
    fallback: 768,
    scope: A,
    default: "768",
    doc: "the typed engine's worker heap (MiB); past it the worker is restarted",
  },
  AIP_TYPED_BUDGET_MS: {
    kind: "int",
    min: 0,
    max: 60_000,
    fallback: 250,
    scope: A,
    default: "250",
    doc: "how long a completion after `expr.` waits for the checker",
  },
  AIP_TYPED_IDENTIFIER_BUDGET_MS: {
    kind: "int",
    min: 0,
    max: 60_000,
    fallback: 15,
    scope: A,
    default: "15",
    doc: "the same at an identifier",
  },
  AIP_TYPED_IDENTIFIER_PREPARE_MS: {
    kind: "int",
    min: 0,
    max: 60_000,
    fallback: 60_000,
    scope: A,
    default: "off",
    doc: "at an identifier, prepare the syntactic answer after this long",
  },
  AIP_LISTEN_FD: {
    kind: "int",
    min: 0,
    max: 65535,
    scope: ["internal"],
    default: "",
    doc: "set by `aip reload` for its successor: the inherited socket",
  },
  AIP_ADOPT: {
    kind: "string",
    scope: ["internal"],
    default: "",
    doc: "set by `aip reload` for its successor: the agents to adopt",
  },
  AIP_RELOAD_READY_FD: {
    kind: "int",
    min: 0,
    max: 65535,
    scope: ["internal"],
    default: "",
    doc: "set by `aip reload` for its successor: where it says ready",
  },
  AIP_GPU_BUILDS: {
    kind: "list",
    scope: ["install"],
    default: "none",
    doc: "node-llama-cpp GPU builds the install keeps (`cuda`, `vulkan`, `all`; comma-separated)",
  },
  AIP_BUILDS_PLATFORM: {
    kind: "enum",
    values: ["linux", "darwin", "win32"],
    scope: ["install"],
    default: "node's `process.platform`",
    doc: "the platform whose node-llama-cpp builds the install keeps (others are removed)",
  },
  AIP_BUILDS_ARCH: {
    kind: "enum",
    values: ["x64", "arm64", "arm"],
    scope: ["install"],
    default: "node's `process.arch`",
    doc: "the architecture whose node-llama-cpp builds the install keeps (others are removed)",
  },
  AIP_BENCH_BASELINE: {
    kind: "path",
    scope: ["bench"],
    default: "unset",
    doc: "another build's `dist/`, measured in the same run",
  },
  AIP_BENCH_CPU_PROF: {
    kind: "path",
    scope: ["bench"],
    default: "unset",
    doc: "write the orchestrator's CPU profile to this folder",
  },
  AIP_BENCH_NODE_ARGS: {
    kind: "string",
    scope: ["bench"],
    default: "unset",
    doc: "node options for the agents a scenario starts",
  },
  AIP_HOSTILE_ABUSES: {
    kind: "list",
    scope: ["bench"],
    default: "every abuse",
    doc: "comma-separated abuses of the hostile scenario",
  },
  AIP_HOSTILE_BREAKDOWN: { kind: "flag", scope: ["bench"], default: "0", doc: "also measure each abuse alone" },
  AIP_HOSTILE_CONTROL: { kind: "flag", scope: ["bench"], default: "0", doc: "also measure the control `cpu_burn`" },
  AIP_HOSTILE_BURN_THREADS: {
    kind: "int",
    min: 1,
    max: 64,
    fallback: 1,
    scope: ["bench"],
    default: "1",
    doc: "threads of the control `cpu_burn`",
  },
  AIP_RELIABILITY: {
    kind: "enum",
    values: ["full"],
    scope: ["test"],
    default: "unset (small scale)",
    doc: "run the reliability suites at full scale",
  },
  AIP_FUZZ_SEED: {
    kind: "int",
    min: 0,
    max: 2 ** 31 - 1,
    fallback: 8,
    scope: ["test"],
    default: "8",
    doc: "the fuzz suite's seed",
  },
  AIP_KEEP_TMP: { kind: "flag", scope: ["test"], default: "0", doc: "keep a reliability run's temporary directory" },
  AIP_WARM_STANDBY: { kind: "flag", scope: ["test"], default: "1", doc: "0: the fault suite restarts agents cold" },
  AIP_VITEST_JSON: {
    kind: "path",
    scope: ["test"],
    default: "unset",
    doc: "where vitest writes its JSON report (.ci/run)",
  },
  AIP_TEST_PYTHON: {
    kind: "path",
    scope: ["test"],
    default: "/usr/bin/python3",
    doc: "the interpreter whose tracebacks the diagnose tests read",
  },
  AIP_TEST_SUCCESSOR_PID_FILE: {
    kind: "path",
    scope: ["test"],
    default: "unset",
    doc: "where a reload's successor writes its pid (tests)",
  },
} as const satisfies Record<string, EnvVar>;

export type EnvName = keyof typeof ENV_VARS;
type Env = Readonly<Record<string, string | undefined>>;

/** A variable set to a value its rule refuses. */
export class EnvError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
    this.name = "EnvError";
  }
}

function spec(name: EnvName): EnvVar {
  return ENV_VARS[name];
}

/** The value's problem under its variable's rule, or undefined when it is valid (or unset). */
export function envProblem(name: EnvName, raw: string | undefined): string | undefined {
  if (raw === undefined || raw === "") return undefined;
  const v = spec(name);
  switch (v.kind) {
    case "int": {
      const n = Number(raw);
      return /^\s*-?\d+\s*$/.test(raw) && Number.isSafeInteger(n) && n >= v.min && n <= v.max
        ? undefined
        : `${name} must be an integer from ${v.min} to ${v.max}, got ${JSON.stringify(raw)}`;
    }
    case "enum":
      return v.values.includes(raw)
        ? undefined
        : `${name} must be one of ${v.values.join(", ")}, got ${JSON.stringify(raw)}`;
    case "flag":
      return raw === "0" || raw === "1" ? undefined : `${name} must be 0 or 1, got ${JSON.stringify(raw)}`;
    default:
      return undefined;
  }
}

function checked(name: EnvName, env: Env): string | undefined {
  const raw = env[name];
  const problem = envProblem(name, raw);
  if (problem) throw new EnvError(name, problem);
  return raw === undefined || raw === "" ? undefined : raw;
}

/** A string, path or enum variable; undefined when unset or empty. */
export function envString(name: EnvName, env: Env = process.env): string | undefined {
  return checked(name, env);
}

/** An integer variable; its registered fallback (or undefined) when unset or empty. */
export function envInt(name: EnvName, env: Env = process.env): number | undefined {
  const raw = checked(name, env);
  const v = spec(name);
  if (v.kind !== "int") throw new TypeError(`${name} is not an integer variable`);
  return raw === undefined ? v.fallback : Number(raw);
}

/** A 0/1 variable; `fallback` when unset or empty. */
export function envFlag(name: EnvName, env: Env = process.env, fallback = false): boolean {
  const raw = checked(name, env);
  return raw === undefined ? fallback : raw === "1";
}

/** A list variable split on `separator` (`:` for paths, `,` for names), empty parts dropped. */
export function envList(name: EnvName, env: Env = process.env, separator = ":"): string[] | undefined {
  return checked(name, env)
    ?.split(separator)
    .filter((p) => p.trim() !== "");
}

/**
 * Check every registered variable read by `scope` in `env`; throws one EnvError naming each bad
 * variable. Called at start by the orchestrator (its scope and the agents', which inherit its
 * environment) and by each agent.
 */
export function checkEnv(env: Env, scopes: readonly EnvScope[]): void {
  const problems = (Object.keys(ENV_VARS) as EnvName[])
    .filter((n) => spec(n).scope.some((s) => scopes.includes(s)))
    .flatMap((n) => envProblem(n, env[n]) ?? []);
  if (problems.length > 0)
    throw new EnvError(
      problems.map((p) => p.split(" ")[0]).join(", "),
      `Invalid environment:\n  ${problems.join("\n  ")}`,
    );
}

/** The rule of a variable, as the table shows it. */
function rule(v: EnvVar): string {
  switch (v.kind) {
    case "int":
      return `integer ${v.min}-${v.max}`;
    case "enum":
      return v.values.map((x) => `\`${x}\``).join(" \\| ");
    case "flag":
      return "`0` or `1`";
    default:
      return v.kind;
  }
}

/** The Markdown table of every variable (docs/operations.md, "Environment variables"). */
export function envTable(): string {
  const rows = Object.entries(ENV_VARS as Record<string, EnvVar>).map(
    ([name, v]) => `| \`${name}\` | ${v.scope.join(", ")} | ${rule(v)} | ${v.default || "–"} | ${v.doc} |`,
  );
  return (
    ["| variable | read by | value | default | what it does |", "|---|---|---|---|---|", ...rows].join("\n") + "\n"
  );
}
