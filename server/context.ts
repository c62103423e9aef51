/** What every procedure can see: the request's identity and the long-lived services. */
import type { AtelierConfig } from "../core/config.js";
import type { Logger } from "../core/logger.js";
import type { ImageBytes } from "../core/image-bytes.js";
import type { AccountStore } from "./accounts/account-store.js";
import type { ApiKeyRecord, ApiKeyStore } from "./keys/api-key-store.js";
import type { ImageSource } from "./image-source/image-source.js";
import type { QuotaStore } from "./quota/quota-store.js";
import type { ModelInstalls } from "./model-installs/model-installs.js";
import type { UsageService } from "./usage/usage-service.js";
import type { WorkerClients } from "./workers/worker-clients.js";

export interface AtelierServices {
  config: AtelierConfig;
  logger: Logger;
  keys: ApiKeyStore;
  /** Console users, sessions and invites, in the same database as the keys. */
  accounts: AccountStore;
  quota: QuotaStore;
  /** Per-key usage counters, fed by every metered call (server/usage/). */
  usage: UsageService;
  /** Background model installs and removals started by admins from the console. */
  modelInstalls: ModelInstalls;
  workers: WorkerClients;
  images: ImageSource;
}

export interface RequestContext {
  /** Correlates logs and responses; echoed in `X-Request-Id` and every body. */
  requestId: string;
  /** The raw `Authorization` header, if any. */
  authorization: string | undefined;
  /**
   * Keys the facade already checked against the store for this request's `Authorization`, by
   * operation (tRPC path), before reading the body (facade/early-authentication.ts): the
   * procedure's authentication takes them instead of reading the store a second time.
   */
  authenticated?: ReadonlyMap<string, ApiKeyRecord>;
  /** Sets a response header (rate-limit headers, `WWW-Authenticate`). */
  setHeader: (name: string, value: string) => void;
  /** Aborts when the client disconnects, so workers stop early. */
  signal: AbortSignal;
  services: AtelierServices;
  /** Adds facts to this request's log line (never secrets); absent outside the HTTP facade. */
  note?: (fields: { keyId?: string; model?: string }) => void;
  /**
   * Takes an image of the answer's `data` as the worker's bytes when the HTTP edge writes the answer
   * itself (a REST call) or a job stores it (jobs/job-images.ts), and returns what to put in its
   * `url` instead of the data URL: the data URL is written from the bytes, base64 a slice at a time
   * (or the raw bytes), so the 20 MB string is never made. Absent where the answer is the
   * procedure's value as it is (tRPC): `url` is then the data URL.
   */
  keepImage?: (image: ImageBytes) => string;
  /**
   * The bytes of `text` when it is itself one of the request body's long ASCII strings (a data URL),
   * so it can be decoded from them: the facade makes such strings from pieces without copying them
   * into one, and the first read of their characters would do that copy on the event loop
   * (facade/json-body-scanner.ts); a job's request, made again from its stored bytes, has them too
   * (jobs/job-image-reads.ts). Absent elsewhere.
   */
  bodyStringBytes?: (text: string) => Uint8Array | undefined;
}
