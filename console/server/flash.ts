/**
 * One-time secrets across a redirect (Post/Redirect/Get): a POST that makes a secret (an API key,
 * an invite link, a rotated signing secret) keeps it as the session's flash and redirects (303) to
 * a page that takes it. The flash lives server-side with the session, sealed under the session id
 * (server/accounts/session-flash-seal.ts), never in a URL or a cookie; taking it removes it, so a
 * reload, Back or Forward shows it no more and makes nothing again. It expires within minutes.
 */
import { z } from "zod";
import type { PageRequest } from "./pages.js";
import { consoleLocals } from "./session-cookie.js";

const FLASH = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("api-key"), keyId: z.string(), name: z.string(), secret: z.string() }),
  z.object({ kind: z.literal("invite"), email: z.string(), code: z.string(), expiresAtMs: z.number() }),
  z.object({ kind: z.literal("webhook-secret"), keyId: z.string(), secret: z.string(), rotated: z.boolean() }),
]);

export type Flash = z.infer<typeof FLASH>;

function sessionIdOf(page: PageRequest): string {
  const { sessionId } = consoleLocals(page.res);
  if (sessionId === null) throw new Error("A flash needs a signed-in session.");
  return sessionId;
}

/** Keeps `flash` for the session's next {@link takeFlash}, replacing any earlier one. */
export async function putFlash(page: PageRequest, flash: Flash): Promise<void> {
  await page.services.accounts.putFlash(sessionIdOf(page), JSON.stringify(flash));
}

/**
 * The session's flash when it is of `kind` (and `matches`, e.g. the key the page is about), once;
 * otherwise null. A flash of another kind is dropped: only the latest POST's secret is kept.
 */
export async function takeFlash<K extends Flash["kind"]>(page: PageRequest, kind: K, matches: (flash: Extract<Flash, { kind: K }>) => boolean = () => true): Promise<Extract<Flash, { kind: K }> | null> {
  const text = await page.services.accounts.takeFlash(sessionIdOf(page));
  if (text === null) return null;
  const parsed = FLASH.safeParse(JSON.parse(text));
  if (!parsed.success || parsed.data.kind !== kind) return null;
  const flash = parsed.data as Extract<Flash, { kind: K }>;
  return matches(flash) ? flash : null;
}
