/**
 * Delivers finished jobs to their `webhookUrl`: one signed POST (webhook-signature.ts) of
 * `{type, timestamp, data: <the job>}`, retried with exponential backoff (base, 4x base, 16x base,
 * ..., at most 6 hours apart) until a 2xx or for a day. Deliveries and every attempt are stored, so
 * retries survive a restart and the job shows them. A target the address policy refuses fails at
 * once: the policy will not change its mind.
 *
 * Receivers are strangers, some slow on purpose: each attempt has one deadline (webhook-request.ts),
 * at most {@link MAX_IN_FLIGHT} run at once and at most {@link MAX_IN_FLIGHT_PER_KEY} of one key, and
 * keys take turns for the free places, so one key's receivers never hold up another key's. On
 * shutdown, attempts still running when the grace period ends are cut off and retried later.
 */
import type { Logger } from "../../core/logger.js";
import type { AddressPolicy } from "../../server/image-source/address-policy.js";
import { imageBytesOf } from "../job-image-reads.js";
import { publicJob, type JobRecord } from "../job-record.js";
import { webhookEventSchema, type WebhookEvent } from "../job-schemas.js";
import { jsonPieces, type JsonPiece } from "../json-pieces.js";
import type { JobStore, WebhookDelivery } from "../job-store.js";
import { DeliveryRefused, postWebhook } from "./webhook-request.js";
import { newSigningSecret, signWebhook } from "./webhook-signature.js";

export interface WebhookDelivererOptions {
  /** Delay before the first retry, in ms; each next one is 4 times longer. */
  retryBaseMs: number;
  /** Deadline of one attempt, from connecting to the receiver's status and headers, in ms. */
  timeoutMs: number;
  /** How long failed deliveries are retried, in ms (a day). */
  windowMs: number;
}

const MAX_RETRY_DELAY_MS = 6 * 3_600_000;
const POLL_MS = 1_000;
/** Attempts running at once in this router. */
export const MAX_IN_FLIGHT = 20;
/** Attempts of one key's deliveries running at once: the rest of {@link MAX_IN_FLIGHT} stays for other keys. */
export const MAX_IN_FLIGHT_PER_KEY = 4;

/** Delay after the `attempt`-th failed attempt (1-based). */
export function retryDelayMs(attempt: number, baseMs: number): number {
  return Math.min(MAX_RETRY_DELAY_MS, baseMs * 4 ** (attempt - 1));
}

export class WebhookDeliverer {
  /** Deliveries being attempted, by id. */
  private readonly inFlight = new Map<number, { id: number; apiKeyId: string }>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly sending = new Set<Promise<void>>();
  /** One read of the due deliveries at a time, so two never hand out the same free places. */
  private taking = false;
  private takeAgain = false;
  /** Aborted when the grace period of a shutdown ends: cuts off the attempts still running. */
  private readonly cutOff = new AbortController();

  constructor(
    private readonly store: JobStore,
    private readonly policy: AddressPolicy,
    private readonly options: WebhookDelivererOptions,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.kick(), Math.min(POLL_MS, this.options.retryBaseMs));
    this.timer.unref();
    this.kick();
  }

  /**
   * Starts no more attempts and waits for those running until `graceEndsAtMs` (epoch ms; now when
   * omitted), then cuts them off: each is recorded as a failed attempt and retried later.
   */
  async stop(graceEndsAtMs = Date.now()): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    const cutOff = setTimeout(() => this.cutOff.abort(), Math.max(0, graceEndsAtMs - Date.now()));
    await Promise.allSettled([...this.sending]);
    clearTimeout(cutOff);
  }

  /**
   * Queues the finished job's delivery when it asked for one. The stored payload holds the result
   * images' stand-ins, and the delivery its own copy of their bytes (written out at each attempt).
   */
  async enqueue(job: JobRecord): Promise<void> {
    if (!job.webhookUrl) return;
    const now = Date.now();
    const event: WebhookEvent = { type: webhookEventSchema.shape.type.parse(`job.${job.status}`), timestamp: new Date(now).toISOString(), data: publicJob(job) };
    const payload = JSON.stringify(event);
    const images = new Map([...job.images].filter(([, image]) => image.blob.part === "result"));
    await this.store.createDelivery({ jobId: job.id, apiKeyId: job.apiKeyId, url: job.webhookUrl, messageId: `msg_${job.id}`, payload, images, createdAtMs: now, nextAttemptAtMs: now });
    this.kick();
  }

  /** The delivery's body as pieces (json-pieces.ts); null when its images are gone. */
  private async body(delivery: WebhookDelivery): Promise<JsonPiece[] | null> {
    // A payload stored with its images inline (before they were kept apart) is sent as it is.
    if (delivery.images.size === 0) return [delivery.payload];
    const images = await imageBytesOf(this.store, delivery.jobId, delivery.images);
    return images && ((await jsonPieces(JSON.parse(delivery.payload), images)) ?? [delivery.payload]);
  }

  /** Fills the free places with due deliveries, keys taking turns; called on a timer, on enqueue and as each attempt ends. */
  private kick(): void {
    if (this.stopped) return;
    if (this.taking) {
      this.takeAgain = true;
      return;
    }
    const limit = MAX_IN_FLIGHT - this.inFlight.size;
    if (limit <= 0) return;
    this.taking = true;
    void this.store
      .dueDeliveries(Date.now(), { limit, perKeyLimit: MAX_IN_FLIGHT_PER_KEY, inFlight: [...this.inFlight.values()] })
      .then((due) => {
        for (const delivery of due) {
          if (this.inFlight.has(delivery.id) || this.stopped) continue;
          this.inFlight.set(delivery.id, { id: delivery.id, apiKeyId: delivery.apiKeyId });
          const sending = this.attempt(delivery).then(
            () => {
              this.settle(delivery.id, sending);
              this.kick();
            },
            // Left due, the delivery is taken again on the timer (not at once: the store may be down).
            (error: unknown) => {
              this.settle(delivery.id, sending);
              this.logger.warn({ err: error, jobId: delivery.jobId }, "webhook attempt not recorded");
            },
          );
          this.sending.add(sending);
        }
      })
      .catch((error: unknown) => this.logger.warn({ err: error }, "webhook queue failed"))
      .finally(() => {
        this.taking = false;
        if (this.takeAgain) {
          this.takeAgain = false;
          this.kick();
        }
      });
  }

  private settle(id: number, sending: Promise<void>): void {
    this.inFlight.delete(id);
    this.sending.delete(sending);
  }

  private async attempt(delivery: WebhookDelivery): Promise<void> {
    const secret = await this.store.signingSecret(delivery.apiKeyId, newSigningSecret);
    const now = Date.now();
    let statusCode: number | null = null;
    let error: string | null = null;
    let refused = false;
    try {
      const body = await this.body(delivery);
      if (!body) throw new DeliveryRefused("the payload's images are gone.");
      const headers = await signWebhook(secret, delivery.messageId, Math.floor(now / 1000), body);
      statusCode = await postWebhook(new URL(delivery.url), { ...headers }, body, this.policy, { timeoutMs: this.options.timeoutMs, signal: this.cutOff.signal });
      if (statusCode < 200 || statusCode > 299) error = `The receiver answered ${statusCode}.`;
    } catch (failure) {
      refused = failure instanceof DeliveryRefused;
      error = refused ? `Refused: ${(failure as Error).message}` : `No answer: ${(failure as Error).message}`;
    }
    const attempts = delivery.attempts.length + 1;
    const nextAttemptAtMs = Date.now() + retryDelayMs(attempts, this.options.retryBaseMs);
    const status = error === null ? "delivered" : refused || nextAttemptAtMs > delivery.createdAtMs + this.options.windowMs ? "failed" : "pending";
    await this.store.recordAttempt(delivery.id, { at: new Date(now).toISOString(), statusCode, error }, { status, nextAttemptAtMs });
    if (status !== "delivered") this.logger.info({ jobId: delivery.jobId, attempts, status, error }, "webhook not delivered");
  }
}
