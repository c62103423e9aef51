/**
 * Invite links carry the one-time code in the URL fragment (`/invite#<code>`): browsers never send
 * the fragment to a server, so the code stays out of request lines, proxy logs and Referer headers.
 * console.js copies it into the form's "Invite code" field; without JavaScript it can be pasted.
 */
import { consoleOrigin } from "../server/console-origin.js";
import { html, type Html } from "../server/html.js";
import type { PageRequest } from "../server/pages.js";
import { time } from "./format.js";

/** The link at the console's origin (ATELIER_PUBLIC_URL when set, console-origin.ts): never at a host the request made up. */
export function inviteLink(page: PageRequest, code: string): string {
  return `${consoleOrigin(page.req, page.services.config.console.publicOrigin)}/invite#${code}`;
}

export function invitePanel(page: PageRequest, email: string, code: string, expiresAt: Date): Html {
  return html`<section class="panel panel-success" aria-labelledby="invite-heading" data-autofocus tabindex="-1">
    <h2 id="invite-heading">Invite for ${email}</h2>
    <p class="warning"><strong>Send this link now.</strong> It is shown only once, works once, and expires ${time(expiresAt)}.</p>
    <div class="secret-row">
      <label for="invite-link">Invite link</label>
      <input id="invite-link" type="text" readonly value="${inviteLink(page, code)}" class="secret" spellcheck="false" autocomplete="off">
      <button type="button" class="button" data-copy-target="invite-link">Copy</button>
      <span class="copy-status" role="status" aria-live="polite"></span>
    </div>
  </section>`;
}

/** What a reload of the invite page shows: the link is gone, and the way to another. */
export function inviteGonePanel(): Html {
  return html`<section class="panel" aria-labelledby="invite-gone-heading" data-autofocus tabindex="-1">
    <h2 id="invite-gone-heading">The invite link is no longer shown</h2>
    <p>An invite link is shown only once, right after it is made. If you did not send it, invite the person again below: the new link works as well.</p>
  </section>`;
}
