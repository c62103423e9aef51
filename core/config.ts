/**
 * The service's whole configuration, read once from environment variables.
 *
 * Every setting is one entry of {@link SETTINGS}: its schema (default and bounds) and its meaning,
 * from which docs/configuration.md is written (`npm run docs`). Every bad value is reported
 * together at start-up so an operator fixes them in one pass.
 */
import path from "node:path";
import os from "node:os";
import { z } from "zod";

const MiB = 1024 * 1024;

/** How a number's default is told to people beside its raw value (`41943040` is 40 MiB). */
export type SettingUnit = "bytes" | "pixels" | "ms";

/** The documentation sections settings are grouped under, in the order they are shown. */
export const SETTING_SECTIONS = [
  "Service",
  "Storage",
  "Models",
  "Quota and usage",
  "Requests and images",
  "Workers",
  "Inference",
  "Style transfer",
  "Prompt improvement",
  "Jobs and webhooks",
  "Console",
] as const;
export type SettingSection = (typeof SETTING_SECTIONS)[number];

/**
 * One setting: the environment variable's schema (type, bounds and default), and the words that
 * document it. The schema, the typed settings and docs/configuration.md are all made from these.
 */
export interface Setting<S extends z.ZodType = z.ZodType> {
  section: SettingSection;
  schema: S;
  /** The default as people read it: a value, or words for one decided at start-up. */
  default: string;
  /** The accepted values as people read them; undefined when any text is accepted. */
  accepts?: string;
  meaning: string;
  /** Numbers only: the default itself, and how it is told. */
  value?: number;
  unit?: SettingUnit;
}

type SettingShape<S extends z.ZodType> = Omit<Setting<S>, "section" | "meaning">;

/** `41943040` → `40 MiB`, `16777216` pixels → `16.8 MP`, `10000` ms → `10 s`. */
export function readableQuantity(value: number, unit: SettingUnit): string {
  switch (unit) {
    case "bytes":
      return value % MiB === 0 ? `${value / MiB} MiB` : value % 1024 === 0 ? `${value / 1024} KiB` : `${value} bytes`;
    case "pixels":
      return `${Number((value / 1_000_000).toFixed(1))} MP`;
    case "ms":
      return value % 1000 === 0 ? `${value / 1000} s` : `${value} ms`;
  }
}

function integer(fallback: number, min: number, max: number, unit?: SettingUnit) {
  return {
    schema: z.coerce.number().int().min(min).max(max).default(fallback),
    default: `\`${fallback}\`${unit ? ` (${readableQuantity(fallback, unit)})` : ""}`,
    accepts: unit === "bytes" || unit === "ms" ? `${readableQuantity(min, unit)}–${readableQuantity(max, unit)}` : `${min}–${max}`,
    value: fallback,
    ...(unit ? { unit } : {}),
  };
}

function decimal(fallback: number, min: number, max: number) {
  return { schema: z.coerce.number().min(min).max(max).default(fallback), default: `\`${fallback}\``, accepts: `${min}–${max}`, value: fallback };
}

function text(fallback: string) {
  return { schema: z.string().default(fallback), default: `\`${fallback}\`` };
}

function choice<const T extends readonly [string, ...string[]]>(values: T, fallback: T[number]) {
  return { schema: z.enum(values).default(fallback as never), default: `\`${fallback}\``, accepts: values.map((value) => `\`${value}\``).join(", ") };
}

/** A comma-separated list; blank entries are dropped. */
const listSchema = z
  .string()
  .default("")
  .transform((value) =>
    value
      .split(",")
      .map((item) => item.trim())
      .filter((item) => item.length > 0),
  );

const optionalSchema = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === "" ? undefined : value.trim()));

/** An optional value; `unset` tells what happens without it. */
function optional(unset: string) {
  return { schema: optionalSchema, default: unset };
}

/** An optional URL with one of `protocols`; blank means unset. Errors never echo the value: it may hold a password. */
function optionalUrl(protocols: readonly string[], example: string, unset: string) {
  return {
    schema: optionalSchema.refine((value) => value === undefined || hasProtocol(value, protocols), { message: `Expected a URL like ${example}.` }),
    default: unset,
    accepts: protocols.map((protocol) => `\`${protocol}//\``).join(" or ") + " URL",
  };
}

/** A boolean setting: true/false, 1/0, yes/no; blank keeps the default. */
function flag(fallback: boolean) {
  return {
    schema: z
      .enum(["true", "false", "1", "0", "yes", "no", ""], { message: "Expected true or false." })
      .default(fallback ? "true" : "false")
      .transform((value) => (value === "" ? fallback : ["true", "1", "yes"].includes(value))),
    default: `\`${fallback}\``,
    accepts: "`true`, `false` (or `1`, `0`, `yes`, `no`)",
  };
}

/** `*`, or an origin exactly as browsers send it in `Origin` (no path, no trailing slash). */
function isCorsOrigin(value: string): boolean {
  if (value === "*") return true;
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.origin === value;
  } catch {
    return false;
  }
}

/** An http(s) origin as a base URL: scheme, host, optional port and at most a trailing slash. */
function isPublicOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.username === "" && url.password === "" && url.pathname === "/" && !value.includes("?") && !value.includes("#");
  } catch {
    return false;
  }
}

function hasProtocol(value: string, protocols: readonly string[]): boolean {
  try {
    return protocols.includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

function setting<T extends SettingShape<z.ZodType>>(section: SettingSection, shape: T, meaning: string): T & { section: SettingSection; meaning: string } {
  return { section, ...shape, meaning };
}

const cores = os.availableParallelism();
const hubUrl = optionalUrl(["http:", "https:"], "https://huggingface.co", "`https://huggingface.co`");
const perWorker = (capability: string) =>
  setting("Workers", optional("`ATELIER_WORKER_ADDRESS`"), `gRPC address of the ${capability} worker, overriding \`ATELIER_WORKER_ADDRESS\` for that capability.`);

/**
 * Every setting, one entry each. A new setting is one entry here and its use in {@link loadConfig};
 * the schema, the types and docs/configuration.md (`npm run docs`) follow.
 */
export const SETTINGS = {
  HOST: setting("Service", text("127.0.0.1"), "Interface the HTTP API and console listen on (`0.0.0.0` to expose them)."),
  PORT: setting("Service", integer(8080, 0, 65535), "HTTP port; `0` picks a free one."),
  LOG_LEVEL: setting("Service", choice(["fatal", "error", "warn", "info", "debug", "trace", "silent"], "info"), "Log level. Logs are JSON lines (pino); keys are never logged."),
  ATELIER_PUBLIC_URL: setting(
    "Service",
    {
      schema: optionalSchema.refine((value) => value === undefined || isPublicOrigin(value), {
        message: "Expected the address browsers open the service at, like https://atelier.example.com (scheme, host and optional port, no path).",
      }),
      default: "(empty: each request's own origin)",
      accepts: "an `http(s)://` origin",
    },
    "The address browsers open the service at, e.g. `https://atelier.example.com` (scheme, host, optional port; no path). When set, the console answers only requests for that host (`421` otherwise), checks form posts against this origin and writes invite links with it. When empty, a console listening on a loopback `HOST` answers only as `localhost`, `127.0.0.1` or `[::1]`. The API, `/healthz` and `/readyz` answer under any host name. Set it in every deployment reached by name.",
  ),
  ATELIER_TRUST_PROXY: setting(
    "Service",
    {
      schema: z
        .string()
        .default("false")
        .transform((value): boolean | number | string => {
          const trimmed = value.trim();
          if (trimmed === "" || trimmed === "false") return false;
          if (trimmed === "true") return true;
          return /^\d+$/.test(trimmed) ? Number(trimmed) : trimmed;
        }),
      default: "`false`",
      accepts: "`false`, `true`, a hop count, or addresses/CIDRs",
    },
    "Which proxies' `X-Forwarded-For`/`-Proto` headers to believe (express `trust proxy`: `true`, a hop count, or addresses/CIDRs such as `loopback` or `10.0.0.0/8`). Decides the client address for sign-in throttling and whether a request came over TLS (the console cookie's `Secure` flag).",
  ),
  ATELIER_CORS_ORIGINS: setting(
    "Service",
    {
      schema: listSchema.refine((origins) => origins.every(isCorsOrigin), {
        message: "Expected `*` or comma-separated origins like https://app.example.com (scheme, host and optional port, no path).",
      }),
      default: "(empty: CORS off)",
      accepts: "`*` or comma-separated origins",
    },
    "Browser origins allowed to call the API cross-origin, e.g. `https://app.example.com,http://localhost:5173`, or `*` for any. Exact origins only (scheme, host, port; no path). Credentials (cookies) are never allowed: keys travel in `Authorization`. Such a page may send and read every header the API documents (`Prefer`, `Idempotency-Key`, `Last-Event-ID`; `Location`, `Preference-Applied`, `Retry-After`, the rate-limit and `X-Atelier-*` headers) and cancel jobs with `DELETE`.",
  ),
  ATELIER_METRICS_PORT: setting("Service", integer(0, 0, 65535), "Port of the Prometheus endpoint `/metrics`, separate from the API and without authentication; `0` serves no metrics, so a second service on the same host needs nothing but its own `PORT`. The Docker image, compose file and Kubernetes manifests set `9464`."),
  ATELIER_METRICS_HOST: setting("Service", optional("`127.0.0.1`"), "Interface the metrics endpoint listens on, whatever `HOST` is; `0.0.0.0` for a Prometheus in another container, pod or machine."),
  ATELIER_SHUTDOWN_GRACE_MS: setting("Service", integer(30_000, 0, 3_600_000, "ms"), "On SIGTERM/SIGINT, how long requests and worker calls already running may take to finish before they are cut off."),

  ATELIER_DATA_DIR: setting("Storage", text("data"), "Folder for `atelier.db` (API keys, console accounts and sessions), `quota.db` (quota counters) and `jobs.db` (the job queue), unless PostgreSQL and Redis hold them."),
  ATELIER_DATABASE_URL: setting(
    "Storage",
    optionalUrl(["postgres:", "postgresql:"], "postgresql://user:password@host:5432/atelier", "(empty: SQLite in `ATELIER_DATA_DIR`)"),
    "PostgreSQL URL for the API keys and console accounts, shared by several routers and the keys and users CLIs, e.g. `postgresql://atelier:PASSWORD@db:5432/atelier`; tables are created automatically.",
  ),
  ATELIER_REDIS_URL: setting(
    "Storage",
    optionalUrl(["redis:", "rediss:"], "redis://host:6379", "(empty: SQLite in `ATELIER_DATA_DIR`)"),
    "Redis URL for the quota counters and the job queue, shared by several routers, e.g. `redis://:PASSWORD@cache:6379/0` (`rediss://` for TLS).",
  ),

  ATELIER_MODELS_DIR: setting("Models", { schema: z.string().optional(), default: "`$ATELIER_DATA_DIR/models`" }, "Folder for installed model weights."),
  ATELIER_MODEL_MIRROR: setting("Models", optional("(empty: public origins)"), "Folder or `http(s)://` URL mirroring model weights in the catalog's layout; first-start provisioning, `models pull` and the console's Models page take files from it instead of their public origins (every file is still checked against its pinned sha256)."),
  ATELIER_MODEL_HUB_URL: setting(
    "Models",
    { ...hubUrl, schema: hubUrl.schema.transform((value) => value ?? "https://huggingface.co") },
    "Hugging Face–compatible hub that models with a hub repository (Stable Diffusion exports) are pulled from; a mirror of it works.",
  ),
  ATELIER_MODEL_HUB_TOKEN: setting("Models", optional("(empty)"), "Access token for gated or private hub repositories; sent to the hub's own origin only."),
  ATELIER_PROVISION_MODELS: setting("Models", flag(true), "On start, a process that runs a worker installs the missing starter models (all permissively licensed; see docs/operations.md) in the background. `false` turns it off."),
  ATELIER_DISABLE_NON_COMMERCIAL: setting("Models", flag(false), "`true` refuses models whose licence forbids commercial use (they are listed with `disabled: true`)."),

  ATELIER_RATE_LIMIT_PER_HOUR: setting("Quota and usage", integer(100, 1, 1_000_000), "Requests per key per window, unless the key has its own limit; also a member's allowance (all their keys together) unless an admin sets another (admins have none unless set)."),
  ATELIER_RATE_LIMIT_WINDOW_SECONDS: setting("Quota and usage", integer(3600, 1, 7 * 24 * 3600), "Length of the fixed quota window, in seconds."),
  ATELIER_QUOTA_MAX_REFUNDS: setting("Quota and usage", integer(10, 0, 1_000_000), "Requests that fail with a 5xx given back to a key's quota per window; later failures stay charged (counted in `atelier_server_failures_total`)."),
  ATELIER_USAGE_FLUSH_MS: setting("Quota and usage", integer(5_000, 100, 600_000, "ms"), "How often the per-key usage counters (the console's Usage page), added up in memory by the API path, are written to the database. A crash loses at most this much of the count."),
  ATELIER_USAGE_RETENTION_DAYS: setting("Quota and usage", integer(400, 31, 36_500), "Days of hourly usage buckets kept; older ones are deleted."),

  ATELIER_MAX_BODY_BYTES: setting("Requests and images", integer(40 * MiB, 1024, 1024 * MiB, "bytes"), "Largest request body (data URLs, or a form's image files, travel in it)."),
  ATELIER_MAX_CONCURRENT_LARGE_BODIES: setting("Requests and images", integer(8, 1, 10_000), "Request bodies over 1 MiB read at once; the next one is refused unread with 503 and `Retry-After`."),
  ATELIER_HTTP_HEADERS_TIMEOUT_MS: setting("Requests and images", integer(10_000, 100, 600_000, "ms"), "Time a client has to send its request headers; then the connection is closed. Never more than `ATELIER_HTTP_REQUEST_TIMEOUT_MS`."),
  ATELIER_HTTP_REQUEST_TIMEOUT_MS: setting("Requests and images", integer(60_000, 100, 3_600_000, "ms"), "Time a client has to send the whole request, body included; then 408 and the connection is closed. The work after it is bounded by `ATELIER_WORKER_DEADLINE_MS`."),
  ATELIER_HTTP_KEEP_ALIVE_TIMEOUT_MS: setting("Requests and images", integer(5_000, 100, 600_000, "ms"), "Time an idle keep-alive connection is kept open between requests."),
  ATELIER_MAX_IMAGE_BYTES: setting("Requests and images", integer(25 * MiB, 1024, 1024 * MiB, "bytes"), "Largest source image, before decoding (a data URL's decoded bytes, a fetched image, an uploaded file)."),
  ATELIER_MAX_INPUT_PIXELS: setting("Requests and images", integer(50_000_000, 1, 1_000_000_000, "pixels"), "Largest source image in pixels (width × height)."),
  ATELIER_MAX_OUTPUT_PIXELS: setting("Requests and images", integer(4096 * 4096, 1, 1_000_000_000, "pixels"), "Largest result in pixels; larger requests answer 413 before any work."),
  ATELIER_FETCH_TIMEOUT_MS: setting("Requests and images", integer(15_000, 100, 600_000, "ms"), "Time limit for fetching a source image, redirects included."),
  ATELIER_FETCH_MAX_REDIRECTS: setting("Requests and images", integer(3, 0, 10), "Redirects followed when fetching a source image, each checked again against the address rules."),
  ATELIER_ALLOWED_PRIVATE_HOSTS: setting(
    "Requests and images",
    { schema: listSchema, default: "(empty)", accepts: "comma-separated hosts, addresses or CIDRs" },
    "Hosts, IP addresses or CIDRs that may be fetched although private, each with an optional `:port`, e.g. `10.0.0.0/8,images.lan:8080,[fd00::5]:9000`. An entry without a port opens only the port of the URL the client sent (80/443 when it names none), never another service on that host. A local or special-use name (`localhost`, `printer.local`, `images.internal`) is reached only through a host name entry naming it. Webhook targets obey the same entries.",
  ),

  ATELIER_WORKER_ADDRESS: setting("Workers", optional("(empty: in-process)"), "gRPC address of the workers for every capability: `host:port`, `ipv4:A:port,B:port` (round robin) or `dns:///name:port`."),
  ATELIER_UPSCALE_WORKER: perWorker("upscale"),
  ATELIER_GENERATION_WORKER: perWorker("generation"),
  ATELIER_STYLE_WORKER: perWorker("style transfer"),
  ATELIER_BACKGROUND_WORKER: perWorker("background removal"),
  ATELIER_PROMPT_WORKER: perWorker("prompt improvement"),
  ATELIER_CATALOG_WORKER: perWorker("model catalog"),
  ATELIER_WORKER_HOST: setting("Workers", text("127.0.0.1"), "Interface a standalone worker (`npm run start:workers`) listens on."),
  ATELIER_WORKER_PORT: setting("Workers", integer(50051, 0, 65535), "Port of a standalone worker."),
  ATELIER_GRPC_MAX_MESSAGE_BYTES: setting("Workers", integer(256 * MiB, 4 * MiB, 2047 * MiB, "bytes"), "gRPC message limit, for workers and their clients."),
  ATELIER_WORKER_DEADLINE_MS: setting("Workers", integer(120_000, 100, 3_600_000, "ms"), "Deadline the router gives each worker call."),
  ATELIER_WORKER_CONCURRENCY: setting("Workers", { ...integer(Math.max(1, Math.min(4, cores)), 1, 256), default: "CPU cores, at most 4" }, "Inference calls a worker runs at once; more wait in its queue."),
  ATELIER_WORKER_QUEUE: setting("Workers", integer(32, 0, 100_000), "Calls a worker lets wait; beyond that it answers 503 `OVERLOADED` with `Retry-After`."),

  ATELIER_ONNX_THREADS: setting("Inference", { ...integer(cores, 1, 256), default: "CPU cores" }, "onnxruntime intra-op threads per model session; models whose runs take milliseconds use one (models/catalog/entries/small-graph-session.ts)."),
  ATELIER_ONNX_SPINNING: setting("Inference", flag(false), "Let onnxruntime's intra-op threads busy-wait for work after each run (onnxruntime's own default). Off because spinning threads take the cores from the decoding, JavaScript and encoding around each run and from other processes; worth trying on a machine with cores to spare for inference alone."),
  ATELIER_MODEL_MEMORY_MB: setting("Inference", integer(3072, 64, 1_048_576), "Memory, in MiB, all loaded model sessions may use (each is charged what it was measured to cost in this process: resident growth at load plus its runs' peak; a calibrated estimate until measured); idle ones are released least recently used first, also whenever the process's resident memory plus the next model's cost would pass this plus a fixed margin for the process itself."),
  ATELIER_MODEL_IDLE_RELEASE_MS: setting("Inference", integer(60_000, 0, 86_400_000, "ms"), "How long a model whose catalog entry asks for it (the large ones that keep hundreds of MB between runs, such as ISNet) stays loaded with no call using it; then its memory goes back to the system and the next call loads it again. One the warm-up loaded waits for its first call before this time counts. Such a release also lets go of what the worker keeps between calls for speed (a background removal's working planes, libvips' operation cache). `0` keeps such models until the memory budget needs the room."),
  ATELIER_WARM_UP: setting("Inference", flag(true), "Once the service serves, warm the default model of each operation in the background (one small call each, only while the memory budget has room; style transfer: the first installed style, on a picture of the largest tile a call paints), so first calls are not slow; a warmed model stays loaded until its first call, unless the budget needs the room; the router also builds each operation's request and answer parsers ahead of its first call. `/readyz` lists the warm models. `false` turns it off."),
  ATELIER_UPSCALE_TIME_BUDGET_MS: setting("Inference", integer(10_000, 0, 3_600_000, "ms"), "Predicted time within which an upscale without `model` may take a stronger, slower way than the fast default (a model ensemble, else one stronger network); larger images get the fast default. The default leaves room for both job slots of a small worker to be busy well inside the worker deadline; `0` turns this off. See docs/api.md."),

  ATELIER_STYLE_WORKING_SIZE: setting("Style transfer", integer(1024, 64, 8192), "Longest side, in pixels, styles are painted at: the networks paint strokes of a fixed pixel size, so larger images are reduced and the painting resized back."),
  ATELIER_STYLE_TILE_SIZE: setting("Style transfer", integer(1024, 128, 8192), "Longest side, in picture pixels, of one network run; larger working images are painted in blended tiles."),

  ATELIER_PROMPT_MAX_TOKENS: setting("Prompt improvement", integer(77, 16, 512), "Budget of improved prompts in CLIP tokens, start and end markers included."),
  ATELIER_PROMPT_LLM_URL: setting("Prompt improvement", optionalUrl(["http:", "https:"], "http://127.0.0.1:11434/v1", "(empty: builtin engine only)"), "OpenAI-compatible chat completions base URL for the LLM prompt engine (Ollama, llama.cpp, vLLM, OpenAI)."),
  ATELIER_PROMPT_LLM_MODEL: setting("Prompt improvement", optional("(required with the URL)"), "Model name on that server."),
  ATELIER_PROMPT_LLM_API_KEY: setting("Prompt improvement", optional("(empty)"), "Sent to that server as `Authorization: Bearer`."),
  ATELIER_PROMPT_LLM_TIMEOUT_MS: setting("Prompt improvement", integer(15_000, 100, 600_000, "ms"), "After this the builtin engine answers."),
  ATELIER_PROMPT_LLM_TEMPERATURE: setting("Prompt improvement", decimal(0.7, 0, 2), "Sampling temperature."),

  ATELIER_JOB_CONCURRENCY: setting("Jobs and webhooks", { ...integer(Math.max(1, Math.min(4, cores)), 1, 256), default: "CPU cores, at most 4" }, "Jobs a router runs at once (each holds one worker call)."),
  ATELIER_JOB_MAX_WAIT_SECONDS: setting("Jobs and webhooks", integer(60, 0, 3600), "Longest `Prefer: wait=N` honoured, in seconds; longer waits are capped to this."),
  ATELIER_JOB_MAX_ACTIVE_PER_KEY: setting("Jobs and webhooks", integer(100, 1, 1_000_000), "Queued plus running jobs per key; more answer 429 `TOO_MANY_JOBS`."),
  ATELIER_JOB_MAX_QUEUED: setting("Jobs and webhooks", integer(10_000, 1, 10_000_000), "Queued jobs in all; more answer 503 `OVERLOADED`."),
  ATELIER_JOB_MAX_EVENT_STREAMS_PER_KEY: setting("Jobs and webhooks", integer(100, 1, 1_000_000), "Job event streams (`GET /api/v1/jobs/{id}/events`) one key may have open on each router; more answer 429 `TOO_MANY_STREAMS`."),
  ATELIER_JOB_MAX_RESULT_DOWNLOADS_PER_KEY: setting("Jobs and webhooks", integer(20, 1, 1_000_000), "Result downloads (`GET /api/v1/jobs/{id}/result`) one key may have in progress on each router; more answer 429 `TOO_MANY_STREAMS`."),
  ATELIER_JOB_RESULT_RETENTION_HOURS: setting("Jobs and webhooks", integer(24, 1, 24 * 365), "How long a finished job's result (image included) is kept, in hours; then `/result` answers 410."),
  ATELIER_JOB_RECORD_RETENTION_HOURS: setting("Jobs and webhooks", integer(7 * 24, 1, 24 * 3650), "How long a finished job's record (status, error, timestamps) is kept, in hours; never less than the result."),
  ATELIER_JOB_LEASE_SECONDS: setting("Jobs and webhooks", integer(30, 1, 3600), "With `ATELIER_REDIS_URL`: how long a router may stop renewing the lock on a job it runs (it died or hung) before another router takes the job over; a live router renews it every half of this."),
  ATELIER_WEBHOOK_RETRY_BASE_MS: setting("Jobs and webhooks", integer(5_000, 10, 3_600_000, "ms"), "Delay before a failed webhook's first retry; each next one is 4 times longer, for a day."),
  ATELIER_WEBHOOK_TIMEOUT_MS: setting("Jobs and webhooks", integer(10_000, 100, 120_000, "ms"), "Deadline of one webhook attempt: connecting, sending and the receiver's status and headers (its body is never read). A late attempt fails and is retried."),

  ATELIER_CONSOLE: setting("Console", choice(["on", "off"], "on"), "`off` serves the API only, without the web console."),
  ATELIER_SIGNUP: setting("Console", choice(["off", "invite", "open"], "off"), "Who may create console accounts: `off` (admins create users or send one-time invites), `invite` (every signed-in user may invite), `open` (anyone, at `/sign-up`)."),
  ATELIER_SESSION_IDLE_MINUTES: setting("Console", integer(60, 1, 7 * 24 * 60), "A console session unused this many minutes ends."),
  ATELIER_SESSION_MAX_HOURS: setting("Console", integer(12, 1, 30 * 24), "A console session ends this many hours after sign-in, however active."),
  ATELIER_MAX_KEYS_PER_USER: setting("Console", integer(20, 1, 10_000), "Active (unrevoked, unexpired) API keys one console user may have; creating another is refused until one is revoked."),
} satisfies Record<string, Setting>;

export type SettingName = keyof typeof SETTINGS;

/** The settings whose default is a number, such as ATELIER_MAX_OUTPUT_PIXELS. */
export type NumericSettingName = { [K in SettingName]: (typeof SETTINGS)[K] extends { value: number } ? K : never }[SettingName];

/** A numeric setting's default as API descriptions tell it: `16.8 MP`, `10 s`, `25 MiB`, `100`. */
export function defaultOf(name: NumericSettingName): string {
  const entry: Setting = SETTINGS[name];
  return entry.unit ? readableQuantity(entry.value!, entry.unit) : String(entry.value);
}

type SettingSchemas = { [K in SettingName]: (typeof SETTINGS)[K]["schema"] };

const envSchema = z.object(Object.fromEntries(Object.entries(SETTINGS).map(([name, entry]) => [name, entry.schema])) as SettingSchemas);

/** The settings as read from the environment, each of its own type. */
export type Settings = z.output<typeof envSchema>;

/** The capabilities that a worker serves; each can live at its own address. */
export const WORKER_SERVICES = ["upscale", "generation", "style", "background", "prompt", "catalog"] as const;
export type WorkerServiceName = (typeof WORKER_SERVICES)[number];

/**
 * The configuration as the code uses it, made from {@link Settings} by {@link loadConfig}. What each
 * value means is told once, in its setting's entry (named beside each field); fields note only units
 * that differ from the variable's.
 */
export interface AtelierConfig {
  http: {
    /** HOST */
    host: string;
    /** PORT */
    port: number;
    /** ATELIER_MAX_BODY_BYTES */
    maxBodyBytes: number;
    /** ATELIER_MAX_CONCURRENT_LARGE_BODIES */
    maxConcurrentLargeBodies: number;
    /** ATELIER_HTTP_HEADERS_TIMEOUT_MS */
    headersTimeoutMs: number;
    /** ATELIER_HTTP_REQUEST_TIMEOUT_MS */
    requestTimeoutMs: number;
    /** ATELIER_HTTP_KEEP_ALIVE_TIMEOUT_MS */
    keepAliveTimeoutMs: number;
  };
  logLevel: Settings["LOG_LEVEL"];
  /** ATELIER_DATA_DIR, as an absolute path. */
  dataDir: string;
  /** ATELIER_DATABASE_URL; undefined: keys live in SQLite in `dataDir`. */
  databaseUrl: string | undefined;
  /** ATELIER_MODELS_DIR, as an absolute path. */
  modelsDir: string;
  /** ATELIER_MODEL_MIRROR: an http(s) URL, or a folder as an absolute path. */
  modelMirror: string | undefined;
  modelHub: {
    /** ATELIER_MODEL_HUB_URL */
    url: string;
    /** ATELIER_MODEL_HUB_TOKEN */
    token: string | undefined;
  };
  quota: {
    /** ATELIER_RATE_LIMIT_PER_HOUR */
    defaultLimit: number;
    /** ATELIER_RATE_LIMIT_WINDOW_SECONDS */
    windowSeconds: number;
    /** ATELIER_REDIS_URL (keys under `atelier:quota:`); undefined: SQLite in `dataDir`. */
    redisUrl: string | undefined;
    /** ATELIER_QUOTA_MAX_REFUNDS */
    maxRefunds: number;
  };
  usage: {
    /** ATELIER_USAGE_FLUSH_MS */
    flushIntervalMs: number;
    /** ATELIER_USAGE_RETENTION_DAYS */
    retentionDays: number;
  };
  images: {
    /** ATELIER_MAX_IMAGE_BYTES */
    maxBytes: number;
    /** ATELIER_MAX_INPUT_PIXELS */
    maxInputPixels: number;
    /** ATELIER_MAX_OUTPUT_PIXELS */
    maxOutputPixels: number;
    /**
     * ATELIER_UPSCALE_TIME_BUDGET_MS (models/requests/upscale-choice.ts). Optional so image limits
     * built by hand keep the fast default.
     */
    upscaleTimeBudgetMs?: number;
  };
  fetch: {
    /** ATELIER_FETCH_TIMEOUT_MS */
    timeoutMs: number;
    /** ATELIER_FETCH_MAX_REDIRECTS */
    maxRedirects: number;
    /** ATELIER_ALLOWED_PRIVATE_HOSTS */
    allowedPrivateHosts: string[];
  };
  workers: {
    /** ATELIER_<CAPABILITY>_WORKER, else ATELIER_WORKER_ADDRESS; undefined means "start it in this process". */
    addresses: Partial<Record<WorkerServiceName, string>>;
    /** ATELIER_WORKER_HOST */
    listenHost: string;
    /** ATELIER_WORKER_PORT */
    listenPort: number;
    /** ATELIER_GRPC_MAX_MESSAGE_BYTES */
    maxMessageBytes: number;
    /** ATELIER_WORKER_DEADLINE_MS */
    deadlineMs: number;
    /** ATELIER_WORKER_CONCURRENCY */
    concurrency: number;
    /** ATELIER_WORKER_QUEUE */
    queueLength: number;
  };
  style: {
    /** ATELIER_STYLE_WORKING_SIZE */
    workingSize: number;
    /** ATELIER_STYLE_TILE_SIZE */
    tileSize: number;
  };
  prompt: {
    /** ATELIER_PROMPT_MAX_TOKENS */
    maxTokens: number;
    /** ATELIER_PROMPT_LLM_*; undefined: the builtin engine only. */
    llm: { baseUrl: string; model: string; apiKey: string | undefined; timeoutMs: number; temperature: number } | undefined;
  };
  jobs: {
    /** ATELIER_JOB_CONCURRENCY */
    concurrency: number;
    /** ATELIER_JOB_MAX_WAIT_SECONDS */
    maxWaitSeconds: number;
    /** ATELIER_JOB_MAX_ACTIVE_PER_KEY */
    maxActivePerKey: number;
    /** ATELIER_JOB_MAX_QUEUED */
    maxQueued: number;
    /** ATELIER_JOB_MAX_EVENT_STREAMS_PER_KEY */
    maxEventStreamsPerKey: number;
    /** ATELIER_JOB_MAX_RESULT_DOWNLOADS_PER_KEY */
    maxResultDownloadsPerKey: number;
    /** ATELIER_JOB_RESULT_RETENTION_HOURS, in milliseconds. */
    resultRetentionMs: number;
    /** ATELIER_JOB_RECORD_RETENTION_HOURS (at least the result's), in milliseconds. */
    recordRetentionMs: number;
    /** ATELIER_WEBHOOK_RETRY_BASE_MS */
    webhookRetryBaseMs: number;
    /** ATELIER_WEBHOOK_TIMEOUT_MS; a Redis store leases a delivery for a little longer. */
    webhookTimeoutMs: number;
    /**
     * ATELIER_REDIS_URL, the same as the quota counters' (jobs under `atelier:jobs:`, BullMQ under
     * `bull:`); undefined: SQLite in `dataDir`.
     */
    redisUrl: string | undefined;
    /** ATELIER_JOB_LEASE_SECONDS, in milliseconds. */
    leaseMs: number;
  };
  console: {
    /** ATELIER_CONSOLE; the API stays under `/api/v1` and `/trpc` either way. */
    enabled: boolean;
    /** ATELIER_SIGNUP */
    signUp: "off" | "invite" | "open";
    /** ATELIER_SESSION_IDLE_MINUTES, in milliseconds. */
    sessionIdleMs: number;
    /** ATELIER_SESSION_MAX_HOURS, in milliseconds. */
    sessionAbsoluteMs: number;
    /** ATELIER_MAX_KEYS_PER_USER */
    maxKeysPerUser: number;
    /** ATELIER_TRUST_PROXY, as express's `trust proxy` takes it. */
    trustProxy: boolean | number | string;
    /** ATELIER_PUBLIC_URL's origin (console/server/console-origin.ts); undefined: the request's own. */
    publicOrigin: string | undefined;
  };
  metrics: {
    /** ATELIER_METRICS_PORT; 0 serves no metrics. */
    port: number;
    /** ATELIER_METRICS_HOST: loopback unless set, since `/metrics` has no authentication. */
    host: string;
  };
  /** ATELIER_CORS_ORIGINS; empty: CORS off. */
  corsOrigins: string[];
  /** ATELIER_SHUTDOWN_GRACE_MS */
  shutdownGraceMs: number;
  /** ATELIER_PROVISION_MODELS */
  provisionModels: boolean;
  inference: {
    /** ATELIER_ONNX_THREADS */
    threads: number;
    /** ATELIER_ONNX_SPINNING */
    spinning: boolean;
    /** ATELIER_MODEL_MEMORY_MB, in bytes. */
    memoryBudgetBytes: number;
    /** ATELIER_DISABLE_NON_COMMERCIAL */
    disableNonCommercial: boolean;
    /** How long an idle session that asks for it stays loaded, in ms; 0: until the budget needs the room. */
    idleReleaseMs: number;
    /** Warm the default model of each operation in the background after start. */
    warmUp: boolean;
  };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  ${problems.join("\n  ")}`);
    this.name = "ConfigError";
  }
}

/** Reads the configuration from `env`; throws {@link ConfigError} listing every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AtelierConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`),
    );
  }
  const e = parsed.data;
  if (e.ATELIER_PROMPT_LLM_URL !== undefined && e.ATELIER_PROMPT_LLM_MODEL === undefined) {
    throw new ConfigError(["ATELIER_PROMPT_LLM_MODEL: required when ATELIER_PROMPT_LLM_URL is set (the model name on that server)."]);
  }
  const dataDir = path.resolve(e.ATELIER_DATA_DIR);
  const shared = e.ATELIER_WORKER_ADDRESS;
  return {
    http: {
      host: e.HOST,
      port: e.PORT,
      maxBodyBytes: e.ATELIER_MAX_BODY_BYTES,
      maxConcurrentLargeBodies: e.ATELIER_MAX_CONCURRENT_LARGE_BODIES,
      // Node requires the headers limit not to exceed the whole-request limit.
      headersTimeoutMs: Math.min(e.ATELIER_HTTP_HEADERS_TIMEOUT_MS, e.ATELIER_HTTP_REQUEST_TIMEOUT_MS),
      requestTimeoutMs: e.ATELIER_HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: e.ATELIER_HTTP_KEEP_ALIVE_TIMEOUT_MS,
    },
    logLevel: e.LOG_LEVEL,
    dataDir,
    databaseUrl: e.ATELIER_DATABASE_URL,
    modelsDir: path.resolve(e.ATELIER_MODELS_DIR ?? path.join(dataDir, "models")),
    modelMirror: e.ATELIER_MODEL_MIRROR === undefined || /^https?:\/\//.test(e.ATELIER_MODEL_MIRROR) ? e.ATELIER_MODEL_MIRROR : path.resolve(e.ATELIER_MODEL_MIRROR),
    modelHub: { url: e.ATELIER_MODEL_HUB_URL, token: e.ATELIER_MODEL_HUB_TOKEN },
    quota: {
      defaultLimit: e.ATELIER_RATE_LIMIT_PER_HOUR,
      windowSeconds: e.ATELIER_RATE_LIMIT_WINDOW_SECONDS,
      redisUrl: e.ATELIER_REDIS_URL,
      maxRefunds: e.ATELIER_QUOTA_MAX_REFUNDS,
    },
    usage: { flushIntervalMs: e.ATELIER_USAGE_FLUSH_MS, retentionDays: e.ATELIER_USAGE_RETENTION_DAYS },
    images: {
      maxBytes: e.ATELIER_MAX_IMAGE_BYTES,
      maxInputPixels: e.ATELIER_MAX_INPUT_PIXELS,
      maxOutputPixels: e.ATELIER_MAX_OUTPUT_PIXELS,
      upscaleTimeBudgetMs: e.ATELIER_UPSCALE_TIME_BUDGET_MS,
    },
    fetch: {
      timeoutMs: e.ATELIER_FETCH_TIMEOUT_MS,
      maxRedirects: e.ATELIER_FETCH_MAX_REDIRECTS,
      allowedPrivateHosts: e.ATELIER_ALLOWED_PRIVATE_HOSTS,
    },
    workers: {
      addresses: dropUndefined({
        upscale: e.ATELIER_UPSCALE_WORKER ?? shared,
        generation: e.ATELIER_GENERATION_WORKER ?? shared,
        style: e.ATELIER_STYLE_WORKER ?? shared,
        background: e.ATELIER_BACKGROUND_WORKER ?? shared,
        prompt: e.ATELIER_PROMPT_WORKER ?? shared,
        catalog: e.ATELIER_CATALOG_WORKER ?? shared,
      }),
      listenHost: e.ATELIER_WORKER_HOST,
      listenPort: e.ATELIER_WORKER_PORT,
      maxMessageBytes: e.ATELIER_GRPC_MAX_MESSAGE_BYTES,
      deadlineMs: e.ATELIER_WORKER_DEADLINE_MS,
      concurrency: e.ATELIER_WORKER_CONCURRENCY,
      queueLength: e.ATELIER_WORKER_QUEUE,
    },
    style: { workingSize: e.ATELIER_STYLE_WORKING_SIZE, tileSize: e.ATELIER_STYLE_TILE_SIZE },
    prompt: {
      maxTokens: e.ATELIER_PROMPT_MAX_TOKENS,
      llm:
        e.ATELIER_PROMPT_LLM_URL === undefined
          ? undefined
          : {
              baseUrl: e.ATELIER_PROMPT_LLM_URL,
              model: e.ATELIER_PROMPT_LLM_MODEL!,
              apiKey: e.ATELIER_PROMPT_LLM_API_KEY,
              timeoutMs: e.ATELIER_PROMPT_LLM_TIMEOUT_MS,
              temperature: e.ATELIER_PROMPT_LLM_TEMPERATURE,
            },
    },
    jobs: {
      concurrency: e.ATELIER_JOB_CONCURRENCY,
      maxWaitSeconds: e.ATELIER_JOB_MAX_WAIT_SECONDS,
      maxActivePerKey: e.ATELIER_JOB_MAX_ACTIVE_PER_KEY,
      maxQueued: e.ATELIER_JOB_MAX_QUEUED,
      maxEventStreamsPerKey: e.ATELIER_JOB_MAX_EVENT_STREAMS_PER_KEY,
      maxResultDownloadsPerKey: e.ATELIER_JOB_MAX_RESULT_DOWNLOADS_PER_KEY,
      resultRetentionMs: e.ATELIER_JOB_RESULT_RETENTION_HOURS * 3_600_000,
      recordRetentionMs: Math.max(e.ATELIER_JOB_RECORD_RETENTION_HOURS, e.ATELIER_JOB_RESULT_RETENTION_HOURS) * 3_600_000,
      webhookRetryBaseMs: e.ATELIER_WEBHOOK_RETRY_BASE_MS,
      webhookTimeoutMs: e.ATELIER_WEBHOOK_TIMEOUT_MS,
      redisUrl: e.ATELIER_REDIS_URL,
      leaseMs: e.ATELIER_JOB_LEASE_SECONDS * 1000,
    },
    console: {
      enabled: e.ATELIER_CONSOLE === "on",
      signUp: e.ATELIER_SIGNUP,
      sessionIdleMs: e.ATELIER_SESSION_IDLE_MINUTES * 60_000,
      sessionAbsoluteMs: e.ATELIER_SESSION_MAX_HOURS * 3_600_000,
      maxKeysPerUser: e.ATELIER_MAX_KEYS_PER_USER,
      trustProxy: e.ATELIER_TRUST_PROXY,
      publicOrigin: e.ATELIER_PUBLIC_URL === undefined ? undefined : new URL(e.ATELIER_PUBLIC_URL).origin,
    },
    metrics: { port: e.ATELIER_METRICS_PORT, host: e.ATELIER_METRICS_HOST ?? "127.0.0.1" },
    corsOrigins: e.ATELIER_CORS_ORIGINS,
    shutdownGraceMs: e.ATELIER_SHUTDOWN_GRACE_MS,
    provisionModels: e.ATELIER_PROVISION_MODELS,
    inference: {
      threads: e.ATELIER_ONNX_THREADS,
      spinning: e.ATELIER_ONNX_SPINNING,
      memoryBudgetBytes: e.ATELIER_MODEL_MEMORY_MB * MiB,
      disableNonCommercial: e.ATELIER_DISABLE_NON_COMMERCIAL,
      idleReleaseMs: e.ATELIER_MODEL_IDLE_RELEASE_MS,
      warmUp: e.ATELIER_WARM_UP,
    },
  };
}

function dropUndefined<T extends object>(record: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(record).filter(([, value]) => value !== undefined),
  ) as Partial<T>;
}
