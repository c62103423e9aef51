/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): HMAC-SHA256 over
 * `{webhook-id}.{webhook-timestamp}.{body}` keyed with the base64 secret after `whsec_`, sent as
 * `webhook-signature: v1,<base64>`. Receivers verify with any Standard Webhooks library.
 */
import { createHmac, randomBytes } from "node:crypto";
import type { WebhookSignatureHeaders } from "../job-schemas.js";
import { piecesText, type JsonPiece } from "../json-pieces.js";

const SECRET_PREFIX = "whsec_";

/** A new signing secret: 24 random bytes, base64, with the `whsec_` prefix the libraries expect. */
export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(24).toString("base64")}`;
}

/** Signs the body the pieces make (json-pieces.ts), reading an image's base64 a slice per turn of the event loop. */
export async function signWebhook(secret: string, messageId: string, timestampSeconds: number, body: readonly JsonPiece[]): Promise<WebhookSignatureHeaders> {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, "base64");
  const hmac = createHmac("sha256", key).update(`${messageId}.${timestampSeconds}.`);
  for await (const text of piecesText(body)) hmac.update(text);
  return { "webhook-id": messageId, "webhook-timestamp": String(timestampSeconds), "webhook-signature": `v1,${hmac.digest("base64")}` };
}
