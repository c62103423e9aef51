/**
 * What a POST that becomes a job asks for, judged before anything is stored: whether its
 * `webhookUrl` is one the server will call, and how long the client waits for the result (the
 * `Prefer` header, a webhook, an idempotency key). Used by the job service's `accept`.
 */
import { z } from "zod";
import { AtelierError } from "../core/errors.js";
import type { AtelierConfig } from "../core/config.js";
import type { AddressPolicy } from "../server/image-source/address-policy.js";
import { invalidInput } from "../server/trpc-errors.js";
import { webhookUrlSchema } from "./job-schemas.js";
import type { Preferences } from "./prefer-header.js";
import { assertTargetAllowed } from "./webhooks/webhook-request.js";

export function parseOrThrow<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw invalidInput(parsed.error.issues.map((issue) => ({ path: issue.path.map(String).join("."), message: issue.message })));
}

const webhookField = z.object({ webhookUrl: webhookUrlSchema });

/** The webhook target of a request that names one (400 for a malformed or refused address); null when it names none. */
export function webhookTarget(body: Record<string, unknown>, addressPolicy: AddressPolicy): string | null {
  if (!Object.hasOwn(body, "webhookUrl")) return null;
  const webhook = parseOrThrow(webhookField, { webhookUrl: body.webhookUrl }).webhookUrl;
  try {
    assertTargetAllowed(new URL(webhook), addressPolicy);
  } catch (error) {
    const message = `webhookUrl: ${(error as Error).message}`;
    throw new AtelierError("INVALID_INPUT", `Invalid request: ${message}`, { issues: [{ path: "webhookUrl", message }] });
  }
  return webhook;
}

export interface WaitPolicy {
  /** How long the answer waits for the job to finish. */
  waitMs: number;
  /** The preferences as applied: `respond-async` added when the answer will not wait. */
  preferences: Preferences;
  /** True when the client is answered with the job (202) rather than held for the result. */
  answerAsync: boolean;
}

/**
 * Without Prefer the client waits as for the synchronous call (the worker deadline); a webhook
 * alone means it does not wait at all.
 */
export function waitPolicy(preferences: Preferences, hasWebhook: boolean, hasIdempotencyKey: boolean, config: AtelierConfig): WaitPolicy {
  const waitMs =
    preferences.waitSeconds !== undefined
      ? Math.min(preferences.waitSeconds, config.jobs.maxWaitSeconds) * 1000
      : preferences.respondAsync || (hasWebhook && !hasIdempotencyKey)
        ? 0
        : config.workers.deadlineMs + 5_000;
  const answerAsync = preferences.respondAsync || preferences.waitSeconds !== undefined || waitMs === 0;
  const applied = answerAsync && !preferences.respondAsync && preferences.waitSeconds === undefined ? { ...preferences, respondAsync: true } : preferences;
  return { waitMs, preferences: applied, answerAsync };
}
