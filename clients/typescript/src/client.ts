/**
 * The Atelier client: `new Atelier({ apiKey })`, then `client.tools.upscale({ image, scale })`.
 * Browser-safe: it needs only `fetch`; file paths and `save()` work once the Node entry point is
 * loaded (which the package's "node" export does by itself).
 */
import { AtelierError } from "./errors.js";
import { HttpClient, type FetchLike } from "./http-client.js";
import { Jobs, Webhooks } from "./resources/jobs.js";
import { Health, Images, Models, Prompts, Tools } from "./resources/operations.js";
import { DEFAULT_MAX_RETRY_AFTER_SECONDS } from "./retry-policy.js";
import { VERSION } from "./version.js";

export interface AtelierOptions {
  /** The API key; default `ATELIER_API_KEY` from the environment (where there is one). */
  apiKey?: string | undefined;
  /** The server's origin, e.g. `https://atelier.example.com`; default `ATELIER_BASE_URL`, else `http://localhost:8080`. */
  baseURL?: string | undefined;
  /** Milliseconds each attempt may take; default 10 minutes (text-to-image on a CPU is slow). */
  timeout?: number;
  /** Retries after the first attempt on connection errors, 408, 409, 429 and 5xx; default 2. */
  maxRetries?: number;
  /** A `Retry-After` longer than this many seconds is raised at once rather than waited for; default 60. */
  maxRetryAfter?: number;
  /** A `fetch` to use instead of the global one (a proxy agent, a test double, an instrumented fetch). */
  fetch?: FetchLike;
  defaultHeaders?: Record<string, string>;
}

export const DEFAULT_BASE_URL = "http://localhost:8080";
export const DEFAULT_TIMEOUT_MS = 10 * 60 * 1000;
export const DEFAULT_MAX_RETRIES = 2;

function env(name: string): string | undefined {
  const processEnv = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const value = processEnv?.[name];
  return value === "" ? undefined : value;
}

export class Atelier {
  readonly images: Images;
  readonly tools: Tools;
  readonly prompts: Prompts;
  readonly models: Models;
  /** The server's liveness and readiness probes. */
  readonly health: Health;
  /** Asynchronous jobs; needs a server that serves `/api/v1/jobs`. */
  readonly jobs: Jobs;
  /** Webhook signing secrets; needs a server with jobs. */
  readonly webhooks: Webhooks;
  readonly baseURL: string;

  constructor(options: AtelierOptions = {}) {
    const fetchImpl = options.fetch ?? (globalThis.fetch ? (input: string, init: RequestInit) => globalThis.fetch(input, init) : undefined);
    if (!fetchImpl) throw new AtelierError("No fetch available: pass `fetch` in the options.", { code: "NO_FETCH" });
    this.baseURL = options.baseURL ?? env("ATELIER_BASE_URL") ?? DEFAULT_BASE_URL;
    try {
      new URL(this.baseURL);
    } catch {
      throw new TypeError(`baseURL must be an absolute http(s) URL, e.g. ${DEFAULT_BASE_URL}; received ${JSON.stringify(this.baseURL)}.`);
    }
    const http = new HttpClient({
      apiKey: options.apiKey ?? env("ATELIER_API_KEY"),
      baseURL: this.baseURL,
      timeout: options.timeout ?? DEFAULT_TIMEOUT_MS,
      maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
      maxRetryAfter: options.maxRetryAfter ?? DEFAULT_MAX_RETRY_AFTER_SECONDS,
      fetch: fetchImpl,
      defaultHeaders: { "x-atelier-client": `typescript/${VERSION}`, ...options.defaultHeaders },
    });
    this.jobs = new Jobs(http);
    this.webhooks = new Webhooks(http);
    this.images = new Images(http, this.jobs);
    this.tools = new Tools(http, this.jobs);
    this.prompts = new Prompts(http, this.jobs);
    this.models = new Models(http);
    this.health = new Health(http);
  }
}
