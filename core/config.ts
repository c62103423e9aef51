/**
 * The service's whole configuration, read once from environment variables.
 *
 * Every setting has a documented default (the README's configuration table mirrors this file), and
 * every bad value is reported together at start-up so an operator fixes them in one pass.
 */
import path from "node:path";
import os from "node:os";
import { z } from "zod";

const MiB = 1024 * 1024;

const integer = (fallback: number, min: number, max: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

/** A comma-separated list; blank entries are dropped. */
const list = z
  .string()
  .default("")
  .transform((value) =>
    value
      .split(",")
      .map((item) => item.trim())
      .filter((item) => item.length > 0),
  );

const optionalAddress = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === "" ? undefined : value.trim()));

/** An optional URL with one of `protocols`; blank means unset. Errors never echo the value: it may hold a password. */
const optionalUrl = (protocols: readonly string[], example: string) =>
  optionalAddress.refine((value) => value === undefined || hasProtocol(value, protocols), {
    message: `Expected a URL like ${example}.`,
  });

/** A boolean setting: true/false, 1/0, yes/no; blank keeps the default. */
function flag(fallback: boolean) {
  return z
    .enum(["true", "false", "1", "0", "yes", "no", ""], { message: "Expected true or false." })
    .default(fallback ? "true" : "false")
    .transform((value) => (value === "" ? fallback : ["true", "1", "yes"].includes(value)));
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

const envSchema = z.object({
  HOST: z.string().default("127.0.0.1"),
  PORT: integer(8080, 0, 65535),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  ATELIER_DATA_DIR: z.string().default("data"),
  ATELIER_DATABASE_URL: optionalUrl(["postgres:", "postgresql:"], "postgresql://user:password@host:5432/atelier"),
  ATELIER_REDIS_URL: optionalUrl(["redis:", "rediss:"], "redis://host:6379"),
  ATELIER_MODELS_DIR: z.string().optional(),
  ATELIER_MODEL_MIRROR: optionalAddress,
  ATELIER_MODEL_HUB_URL: optionalUrl(["http:", "https:"], "https://huggingface.co").transform((value) => value ?? "https://huggingface.co"),
  ATELIER_MODEL_HUB_TOKEN: optionalAddress,
  ATELIER_RATE_LIMIT_PER_HOUR: integer(100, 1, 1_000_000),
  ATELIER_RATE_LIMIT_WINDOW_SECONDS: integer(3600, 1, 7 * 24 * 3600),
  ATELIER_QUOTA_MAX_REFUNDS: integer(10, 0, 1_000_000),
  ATELIER_USAGE_FLUSH_MS: integer(5_000, 100, 600_000),
  ATELIER_USAGE_RETENTION_DAYS: integer(400, 31, 36_500),
  ATELIER_MAX_BODY_BYTES: integer(40 * MiB, 1024, 1024 * MiB),
  ATELIER_MAX_CONCURRENT_LARGE_BODIES: integer(8, 1, 10_000),
  ATELIER_HTTP_HEADERS_TIMEOUT_MS: integer(10_000, 100, 600_000),
  ATELIER_HTTP_REQUEST_TIMEOUT_MS: integer(60_000, 100, 3_600_000),
  ATELIER_HTTP_KEEP_ALIVE_TIMEOUT_MS: integer(5_000, 100, 600_000),
  ATELIER_MAX_IMAGE_BYTES: integer(25 * MiB, 1024, 1024 * MiB),
  ATELIER_MAX_INPUT_PIXELS: integer(50_000_000, 1, 1_000_000_000),
  ATELIER_MAX_OUTPUT_PIXELS: integer(4096 * 4096, 1, 1_000_000_000),
  ATELIER_FETCH_TIMEOUT_MS: integer(15_000, 100, 600_000),
  ATELIER_FETCH_MAX_REDIRECTS: integer(3, 0, 10),
  ATELIER_ALLOWED_PRIVATE_HOSTS: list,
  ATELIER_WORKER_ADDRESS: optionalAddress,
  ATELIER_UPSCALE_WORKER: optionalAddress,
  ATELIER_GENERATION_WORKER: optionalAddress,
  ATELIER_STYLE_WORKER: optionalAddress,
  ATELIER_BACKGROUND_WORKER: optionalAddress,
  ATELIER_PROMPT_WORKER: optionalAddress,
  ATELIER_CATALOG_WORKER: optionalAddress,
  ATELIER_WORKER_HOST: z.string().default("127.0.0.1"),
  ATELIER_WORKER_PORT: integer(50051, 0, 65535),
  ATELIER_GRPC_MAX_MESSAGE_BYTES: integer(256 * MiB, 4 * MiB, 2047 * MiB),
  ATELIER_WORKER_DEADLINE_MS: integer(120_000, 100, 3_600_000),
  ATELIER_WORKER_CONCURRENCY: integer(Math.max(1, Math.min(4, os.availableParallelism())), 1, 256),
  ATELIER_WORKER_QUEUE: integer(32, 0, 100_000),
  ATELIER_STYLE_WORKING_SIZE: integer(1024, 64, 8192),
  ATELIER_STYLE_TILE_SIZE: integer(1024, 128, 8192),
  ATELIER_PROMPT_MAX_TOKENS: integer(77, 16, 512),
  ATELIER_PROMPT_LLM_URL: optionalUrl(["http:", "https:"], "http://127.0.0.1:11434/v1"),
  ATELIER_PROMPT_LLM_MODEL: optionalAddress,
  ATELIER_PROMPT_LLM_API_KEY: optionalAddress,
  ATELIER_PROMPT_LLM_TIMEOUT_MS: integer(15_000, 100, 600_000),
  ATELIER_PROMPT_LLM_TEMPERATURE: z.coerce.number().min(0).max(2).default(0.7),
  ATELIER_ONNX_THREADS: integer(os.availableParallelism(), 1, 256),
  ATELIER_ONNX_SPINNING: flag(false),
  ATELIER_MODEL_MEMORY_MB: integer(3072, 64, 1_048_576),
  ATELIER_UPSCALE_TIME_BUDGET_MS: integer(10_000, 0, 3_600_000),
  ATELIER_JOB_CONCURRENCY: integer(Math.max(1, Math.min(4, os.availableParallelism())), 1, 256),
  ATELIER_JOB_MAX_WAIT_SECONDS: integer(60, 0, 3600),
  ATELIER_JOB_MAX_ACTIVE_PER_KEY: integer(100, 1, 1_000_000),
  ATELIER_JOB_MAX_QUEUED: integer(10_000, 1, 10_000_000),
  ATELIER_JOB_MAX_EVENT_STREAMS_PER_KEY: integer(100, 1, 1_000_000),
  ATELIER_JOB_MAX_RESULT_DOWNLOADS_PER_KEY: integer(20, 1, 1_000_000),
  ATELIER_JOB_RESULT_RETENTION_HOURS: integer(24, 1, 24 * 365),
  ATELIER_JOB_RECORD_RETENTION_HOURS: integer(7 * 24, 1, 24 * 3650),
  ATELIER_JOB_LEASE_SECONDS: integer(30, 1, 3600),
  ATELIER_WEBHOOK_RETRY_BASE_MS: integer(5_000, 10, 3_600_000),
  ATELIER_WEBHOOK_TIMEOUT_MS: integer(10_000, 100, 120_000),
  ATELIER_CONSOLE: z.enum(["on", "off"]).default("on"),
  ATELIER_SIGNUP: z.enum(["off", "invite", "open"]).default("off"),
  ATELIER_SESSION_IDLE_MINUTES: integer(60, 1, 7 * 24 * 60),
  ATELIER_SESSION_MAX_HOURS: integer(12, 1, 30 * 24),
  ATELIER_MAX_KEYS_PER_USER: integer(20, 1, 10_000),
  ATELIER_PUBLIC_URL: optionalAddress.refine((value) => value === undefined || isPublicOrigin(value), {
    message: "Expected the address browsers open the service at, like https://atelier.example.com (scheme, host and optional port, no path).",
  }),
  ATELIER_TRUST_PROXY: z
    .string()
    .default("false")
    .transform((value): boolean | number | string => {
      const trimmed = value.trim();
      if (trimmed === "" || trimmed === "false") return false;
      if (trimmed === "true") return true;
      return /^\d+$/.test(trimmed) ? Number(trimmed) : trimmed;
    }),
  ATELIER_METRICS_PORT: integer(0, 0, 65535),
  ATELIER_METRICS_HOST: optionalAddress,
  ATELIER_CORS_ORIGINS: list.refine((origins) => origins.every(isCorsOrigin), {
    message: "Expected `*` or comma-separated origins like https://app.example.com (scheme, host and optional port, no path).",
  }),
  ATELIER_SHUTDOWN_GRACE_MS: integer(30_000, 0, 3_600_000),
  ATELIER_PROVISION_MODELS: flag(true),
  ATELIER_DISABLE_NON_COMMERCIAL: z
    .enum(["true", "false", "1", "0", "yes", "no", ""])
    .default("false")
    .transform((value) => ["true", "1", "yes"].includes(value)),
});

/** The capabilities that a worker serves; each can live at its own address. */
export const WORKER_SERVICES = ["upscale", "generation", "style", "background", "prompt", "catalog"] as const;
export type WorkerServiceName = (typeof WORKER_SERVICES)[number];

export interface AtelierConfig {
  http: {
    /** Interface the REST facade and tRPC endpoint listen on. */
    host: string;
    /** TCP port; 0 picks a free one (tests). */
    port: number;
    /** Largest accepted request body in bytes (data URLs travel in the body). */
    maxBodyBytes: number;
    /** Request bodies over 1 MiB read at once; the next one gets 503 with Retry-After, unread. */
    maxConcurrentLargeBodies: number;
    /** Time a client has to send the request headers, in milliseconds. */
    headersTimeoutMs: number;
    /** Time a client has to send the whole request, body included, in milliseconds (then 408). */
    requestTimeoutMs: number;
    /** Time an idle keep-alive connection stays open between requests, in milliseconds. */
    keepAliveTimeoutMs: number;
  };
  logLevel: z.infer<typeof envSchema>["LOG_LEVEL"];
  /** Folder for the SQLite databases (API keys, quota counters). */
  dataDir: string;
  /**
   * PostgreSQL connection URL for the API keys, shared by several routers; its tables are created
   * on first use. Undefined: keys live in SQLite in `dataDir`.
   */
  databaseUrl: string | undefined;
  /** Folder where installed model weights live. */
  modelsDir: string;
  /**
   * Local folder or http(s) URL mirroring model weights (`models pull` and first-start provisioning
   * take files from it instead of their public origins; so do installs from the console's Models
   * page). Undefined: the public origins.
   */
  modelMirror: string | undefined;
  /** The Hugging Face–compatible hub that models with a hub repository are pulled from. */
  modelHub: {
    /** Base URL, e.g. https://huggingface.co or a mirror of it. */
    url: string;
    /** Access token for gated or private repositories; sent to the hub's own origin only. */
    token: string | undefined;
  };
  quota: {
    /**
     * Requests granted per key per window unless the key has its own limit; also a member's
     * allowance, shared by all their keys, unless an admin set another (admins have none unless set).
     */
    defaultLimit: number;
    /** Length of the fixed quota window in seconds. */
    windowSeconds: number;
    /**
     * Redis URL for the quota counters, shared by several routers (keys under `atelier:quota:`).
     * Undefined: counters live in SQLite in `dataDir`.
     */
    redisUrl: string | undefined;
    /** Requests failed by the server (5xx) given back per key per window; later failures stay charged. */
    maxRefunds: number;
  };
  usage: {
    /**
     * Milliseconds between writes of the per-key usage counters, which the API path adds up in
     * memory; a crash loses at most this much of the count.
     */
    flushIntervalMs: number;
    /** Days of hourly usage buckets kept; older ones are deleted. */
    retentionDays: number;
  };
  images: {
    /** Largest encoded source image in bytes, checked before decoding. */
    maxBytes: number;
    /** Largest decoded source image in pixels (width x height). */
    maxInputPixels: number;
    /** Largest produced image in pixels; larger requests answer 413 before any work. */
    maxOutputPixels: number;
    /**
     * Predicted time, in milliseconds, within which an upscale without `model` may take a stronger,
     * slower way than the fast default (workers/upscale/upscale-choice.ts: LSDIR as a self-ensemble at
     * x2, ESRGAN thick at x4); 0 turns that off. Default 10000: on 2 cores that covers about 0.6 MP of
     * output at x2 and 2.1 MP at x4, and a call predicted at 10 s alone takes about 20 s with both job
     * slots busy, well inside the 120 s worker deadline. Optional so image limits built by hand keep
     * the fast default.
     */
    upscaleTimeBudgetMs?: number;
  };
  fetch: {
    /** Whole-fetch time limit for a source image, redirects included, in milliseconds. */
    timeoutMs: number;
    /** Redirects followed, each re-checked against the address policy. */
    maxRedirects: number;
    /** Hosts or CIDR ranges that may be fetched although they are private or loopback. */
    allowedPrivateHosts: string[];
  };
  workers: {
    /** Where each capability's gRPC worker listens; undefined means "start it in this process". */
    addresses: Partial<Record<WorkerServiceName, string>>;
    /** Interface and port a standalone worker process listens on. */
    listenHost: string;
    listenPort: number;
    /** gRPC message size limit in bytes, applied to servers and clients alike. */
    maxMessageBytes: number;
    /** Deadline the router gives each worker call, in milliseconds. */
    deadlineMs: number;
    /** Inference calls a worker runs at once; more wait in its queue. */
    concurrency: number;
    /** Calls a worker lets wait; beyond that it answers "overloaded" (503 with Retry-After). */
    queueLength: number;
  };
  style: {
    /**
     * Longest side, in pixels, styles are painted at: fast-style networks paint strokes of a fixed
     * pixel size, so larger images are reduced to this and the painting resized back.
     */
    workingSize: number;
    /** Longest tile side, in picture pixels, of one network run; larger working images are tiled. */
    tileSize: number;
  };
  prompt: {
    /** Default budget of improved prompts in CLIP tokens, start/end markers included. */
    maxTokens: number;
    /** OpenAI-compatible chat completions server; undefined: the builtin engine only. */
    llm: { baseUrl: string; model: string; apiKey: string | undefined; timeoutMs: number; temperature: number } | undefined;
  };
  jobs: {
    /** Jobs this router runs at once (each holds one worker call). */
    concurrency: number;
    /** Longest `Prefer: wait=N` honoured, in seconds; longer waits are capped to this. */
    maxWaitSeconds: number;
    /** Queued plus running jobs one key may have; more answer 429. */
    maxActivePerKey: number;
    /** Queued jobs across all keys; more answer 503. */
    maxQueued: number;
    /** Job event streams (SSE) one key may have open on this router at once; more answer 429. */
    maxEventStreamsPerKey: number;
    /** Result downloads (`GET /v1/jobs/{id}/result`) one key may have in progress on this router at once; more answer 429. */
    maxResultDownloadsPerKey: number;
    /** How long a finished job's result (image included) is kept, in milliseconds. */
    resultRetentionMs: number;
    /** How long a finished job's record (status, error, timestamps) is kept, in milliseconds. */
    recordRetentionMs: number;
    /** Delay before a failed webhook's first retry, in ms; each next one is 4 times longer (for a day). */
    webhookRetryBaseMs: number;
    /**
     * Deadline of one webhook attempt, from connecting to the receiver's status and headers, in ms
     * (the receiver's body is never read); a Redis store leases a delivery for a little longer.
     */
    webhookTimeoutMs: number;
    /**
     * Redis URL of the queue every router shares (jobs under `atelier:jobs:`, BullMQ under
     * `bull:`); the same ATELIER_REDIS_URL as the quota counters. Undefined: SQLite in `dataDir`.
     */
    redisUrl: string | undefined;
    /**
     * With Redis: how long a router holds a job without renewing its lock before another router
     * takes the job over (a router that died); renewed every half of it while the router lives.
     */
    leaseMs: number;
  };
  console: {
    /** Serve the web console under `/` (the API stays under `/api/v1` and `/trpc` either way). */
    enabled: boolean;
    /**
     * Who may create an account: `off` (admins create users or send one-time invites), `invite`
     * (every signed-in user may send invites), `open` (anyone may sign up at /sign-up).
     */
    signUp: "off" | "invite" | "open";
    /** A console session unused this long ends, in milliseconds. */
    sessionIdleMs: number;
    /** A console session ends this long after sign-in, however active, in milliseconds. */
    sessionAbsoluteMs: number;
    /** Active (unrevoked, unexpired) API keys one console user may have; creating another is refused. */
    maxKeysPerUser: number;
    /**
     * Express's `trust proxy`: which proxies' `X-Forwarded-For`/`-Proto` to believe (false: none;
     * true: all; a hop count; or addresses/CIDRs such as `loopback`). Decides the client address
     * for sign-in throttling and whether a request came over TLS (the `Secure` cookie flag).
     */
    trustProxy: boolean | number | string;
    /**
     * The origin browsers open the service at (`https://atelier.example.com`). Set: the console
     * answers only requests for its host, checks form posts against it and writes links with it.
     * Undefined: the request's own origin, and a console listening on loopback answers loopback
     * names only (console/server/console-origin.ts).
     */
    publicOrigin: string | undefined;
  };
  metrics: {
    /**
     * Port of the separate Prometheus `/metrics` listener; 0 (the default) serves no metrics, so a
     * second service on the same host needs nothing but its own PORT.
     */
    port: number;
    /** Interface it listens on: loopback unless set, whatever HOST is, since `/metrics` has no authentication. */
    host: string;
  };
  /** Browser origins allowed to call the API cross-origin (`*` for any); empty: CORS off. */
  corsOrigins: string[];
  /** How long a stopping process lets in-flight requests and worker calls finish, in milliseconds. */
  shutdownGraceMs: number;
  /** Install the starter models in the background on start (from the mirror when one is set). */
  provisionModels: boolean;
  inference: {
    /** onnxruntime intra-op threads per session. */
    threads: number;
    /** Let those threads busy-wait for work between runs (onnxruntime's own default). */
    spinning: boolean;
    /** Estimated memory all loaded model sessions may use before idle ones are evicted, in bytes. */
    memoryBudgetBytes: number;
    /** Refuse models whose licence forbids commercial use (they are listed as disabled). */
    disableNonCommercial: boolean;
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
    },
  };
}

function dropUndefined<T extends object>(record: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(record).filter(([, value]) => value !== undefined),
  ) as Partial<T>;
}
