/**
 * The API Keys area: a member sees and manages their own keys, an admin everyone's (CLI keys
 * included). Another user's key answers 404, exactly like a key that does not exist. The secret is
 * shown once, with a copy button: the creating POST keeps it as the session's flash
 * (server/flash.ts) and redirects to `/keys/<id>/created`, which takes it, so a reload shows it no
 * more and creates no second key; afterwards only the recognisable prefix `atl_<id>_` is ever
 * displayed. A key's webhook signing secret is shown to the key's owner only, admins included
 * (key-owner.ts), on request (a POST, so it never sits in a URL or a cached page, whose redirect
 * shows it the same way), and can be rotated there, as `GET`/`POST /api/v1/webhooks/secret` do for
 * the key itself.
 */
import type express from "express";
import { API_KEY_HOURLY_LIMIT_MAX } from "../../server/keys/api-key-format.js";
import { API_KEY_SCOPE_LABELS, API_KEY_SCOPES, type ApiKeyScope } from "../../server/keys/api-key-scopes.js";
import type { ApiKeyRecord } from "../../server/keys/api-key-store.js";
import type { User } from "../../server/accounts/account-store.js";
import type { AtelierServices } from "../../server/context.js";
import { hourlyAllowanceOf } from "../../server/quota/quota-charge.js";
import type { JobService } from "../../jobs/job-service.js";
import { consoleOrigin } from "../server/console-origin.js";
import { csrfField } from "../server/csrf.js";
import { html, type Html } from "../server/html.js";
import { putFlash, takeFlash } from "../server/flash.js";
import { fieldErrors, redirect, registerPage, type PageRequest, type PageResponse } from "../server/pages.js";
import { errorSummary, field } from "./form-fields.js";
import { allowancePanel, userAllowance } from "./allowance.js";
import { count, time } from "./format.js";
import { ownKey, ownsKey } from "./key-owner.js";

const DAY_MS = 24 * 3600 * 1000;

type KeyStatus = "active" | "revoked" | "expired";

function statusOf(key: ApiKeyRecord, nowMs: number): KeyStatus {
  if (key.revokedAt) return "revoked";
  if (key.expiresAt && key.expiresAt.getTime() <= nowMs) return "expired";
  return "active";
}

export function keyPrefix(key: Pick<ApiKeyRecord, "id">): string {
  return `atl_${key.id}_…`;
}

/** The largest hourly limit `user` may give a key: their allowance, if they have one. */
function allowanceOf(services: AtelierServices, user: User): number {
  return hourlyAllowanceOf(user, services.config.quota.defaultLimit) ?? API_KEY_HOURLY_LIMIT_MAX;
}

/** The key when `user` may see it: their own, or any for an admin. Otherwise null, as for an unknown id. */
export async function visibleKey(services: AtelierServices, user: User, id: string): Promise<ApiKeyRecord | null> {
  if (typeof id !== "string" || id.length > 64) return null;
  const key = await services.keys.get(id);
  if (!key) return null;
  return user.role === "admin" || key.ownerId === user.id ? key : null;
}

function notFound(): PageResponse {
  return { status: 404, title: "Key not found", main: html`<p>There is no such key, or it is not yours.</p><p><a href="/keys">Back to API keys</a></p>` };
}

async function ownerNames(services: AtelierServices): Promise<Map<string, string>> {
  return new Map((await services.accounts.listUsers()).map((user) => [user.id, user.email]));
}

async function keyRows(page: PageRequest, keys: ApiKeyRecord[]): Promise<Html> {
  const { services, user } = page;
  const admin = user!.role === "admin";
  const owners = admin ? await ownerNames(services) : new Map<string, string>();
  const now = Date.now();
  const rows = await Promise.all(
    keys.map(async (key) => {
      const status = statusOf(key, now);
      const limit = key.hourlyLimit ?? services.config.quota.defaultLimit;
      const usage = status === "active" ? await services.quota.peek({ key: { id: key.id, limit } }) : null;
      const used = usage ? usage.key.used : 0;
      return html`<tr>
        <th scope="row" data-label="Name"><a href="/keys/${key.id}">${key.name}</a><span class="cell-note">${key.scopes ? `Scopes: ${key.scopes.join(", ")}` : "All operations"}</span></th>
        <td data-label="Key"><code>${keyPrefix(key)}</code></td>
        ${admin ? html`<td data-label="Owner">${key.ownerId === null ? "CLI (operator)" : (owners.get(key.ownerId) ?? "Deleted user")}</td>` : html``}
        <td data-label="Created">${time(key.createdAt)}</td>
        <td data-label="Last used">${time(key.lastUsedAt)}${key.lastUsedOperation ? html`<span class="cell-note">${key.lastUsedOperation}</span>` : html``}</td>
        <td data-label="This hour">${usage ? html`${count(used)} of ${count(limit)}` : html`<span class="muted">–</span>`}</td>
        <td data-label="Expires">${time(key.expiresAt, "Never")}</td>
        <td data-label="Status"><span class="status status-${status}">${status}</span></td>
        <td data-label="Actions">${
          status === "revoked"
            ? html``
            : html`<form method="get" action="/keys/${key.id}/revoke" class="inline-form"><button type="submit" class="button button-danger">Revoke<span class="visually-hidden"> ${key.name}</span></button></form>`
        }</td>
      </tr>`;
    }),
  );
  if (keys.length === 0) return html`<p>No keys yet: Create key makes your first one.</p>`;
  return html`<table class="data-table keys-table">
    <caption class="visually-hidden">Your API keys</caption>
    <thead><tr><th scope="col">Name</th><th scope="col">Key</th>${admin ? html`<th scope="col">Owner</th>` : html``}<th scope="col">Created</th><th scope="col">Last used</th><th scope="col">This hour</th><th scope="col">Expires</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${rows}</tbody>
  </table>`;
}

interface CreateFormState {
  values: Record<string, string | undefined>;
  scopes: string[];
  errors: Record<string, string>;
  /** Show the form open although it has no errors (after a secret that can no longer be shown). */
  open?: boolean;
}

/**
 * The Create key button and the form it opens: a disclosure (`<details>`), so it opens without
 * script too; it comes open when the form is shown again with its errors.
 */
function createForm(page: PageRequest, state: CreateFormState): Html {
  const allowance = allowanceOf(page.services, page.user!);
  const tomorrow = new Date(Date.now() + DAY_MS).toISOString().slice(0, 10);
  const open = state.open === true || Object.keys(state.errors).length > 0;
  return html`<details class="create-key"${open ? html` open` : html``}>
    <summary class="button">Create key</summary>
    <section aria-labelledby="create-heading" class="panel">
    <h2 id="create-heading">New key</h2>
    ${errorSummary(state.errors)}
    <form method="post" action="/keys" class="form">
      ${csrfField(page.csrfToken)}
      ${field({ name: "name", label: "Name", value: state.values.name ?? "", required: true, hint: "What the key is for, e.g. “website backend”.", error: state.errors.name, attributes: html`maxlength="100"` })}
      ${field({ name: "expiresOn", label: "Expires on", type: "date", value: state.values.expiresOn ?? "", hint: "The key stops working at the end of this day (UTC). Leave empty for a key that does not expire.", error: state.errors.expiresAt, attributes: html`min="${tomorrow}"` })}
      ${field({ name: "hourlyLimit", label: "Hourly limit", type: "number", value: state.values.hourlyLimit ?? "", hint: `Requests per hour, up to ${count(allowance)}${hourlyAllowanceOf(page.user!, page.services.config.quota.defaultLimit) === null ? "" : " (your allowance, which all your keys share)"}. Leave empty for ${count(Math.min(allowance, page.services.config.quota.defaultLimit))}.`, error: state.errors.hourlyLimit, attributes: html`min="1" max="${allowance}" step="1" inputmode="numeric"` })}
      <fieldset class="field${state.errors.scopes ? " field-invalid" : ""}" aria-describedby="scopes-hint">
        <legend>Scopes <span class="optional">(optional)</span></legend>
        <p class="hint" id="scopes-hint">The operations this key may call. Tick none to allow every operation.</p>
        ${state.errors.scopes ? html`<p class="error">${state.errors.scopes}</p>` : html``}
        ${API_KEY_SCOPES.map(
          (scope) => html`<div class="checkbox"><input type="checkbox" id="scope-${scope}" name="scopes" value="${scope}"${state.scopes.includes(scope) ? html` checked` : html``}><label for="scope-${scope}">${API_KEY_SCOPE_LABELS[scope]}</label></div>`,
        )}
      </fieldset>
      <button type="submit" class="button">Create</button>
    </form>
  </section>
  </details>`;
}

/** Shell lines that set the variables every example, client and the CLI read, then call the API with the key. */
function shellLines(secret: string, origin: string): string {
  return [
    `export ATELIER_API_KEY=${secret}`,
    `export ATELIER_BASE_URL=${origin}`,
    `curl -s "$ATELIER_BASE_URL/api/v1/jobs?limit=1" -H "Authorization: Bearer $ATELIER_API_KEY"`,
  ].join("\n");
}

function newKeyPanel(name: string, secret: string, origin: string): Html {
  return html`<section class="panel panel-success" aria-labelledby="secret-heading" data-autofocus tabindex="-1">
    <h2 id="secret-heading">Key “${name}” created</h2>
    <p class="warning"><strong>Copy the key now.</strong> It is shown only this once; Atelier keeps only a hash of it and cannot show it again.</p>
    <div class="secret-row">
      <label for="new-key-secret">Your new API key</label>
      <input id="new-key-secret" type="text" readonly value="${secret}" class="secret" spellcheck="false" autocomplete="off">
      <button type="button" class="button" data-copy-target="new-key-secret">Copy</button>
      <span class="copy-status" role="status" aria-live="polite"></span>
    </div>
    <p>Use it from a shell; the examples in the README, the clients and the CLI read the same two variables:</p>
    <pre class="code-block"><code id="new-key-shell">${shellLines(secret, origin)}</code></pre>
  </section>`;
}

/** What a reload of the "key created" page shows: the secret is gone, and the way to another key. */
function secretGonePanel(): Html {
  return html`<section class="panel" aria-labelledby="secret-gone-heading" data-autofocus tabindex="-1">
    <h2 id="secret-gone-heading">The key’s secret is no longer shown</h2>
    <p>A key’s secret is shown only once, right after it is created, and Atelier cannot show it again. If you did not copy it, create another key below (and revoke the one you cannot use).</p>
  </section>`;
}

function newestFirst(keys: ApiKeyRecord[]): ApiKeyRecord[] {
  return [...keys].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
}

async function keysPage(page: PageRequest, state: CreateFormState, top?: Html): Promise<PageResponse> {
  const { services, user } = page;
  const keys = user!.role === "admin" ? await services.keys.list() : await services.keys.list({ ownerId: user!.id });
  const allowance = await userAllowance(services, user!, keys);
  return {
    status: Object.keys(state.errors).length > 0 ? 400 : 200,
    main: html`
      ${top ?? html``}
      <p class="lead">${user!.role === "admin" ? "Every key on this service, yours, other users’ and those made with the keys CLI." : "Your keys for the Atelier API. Send one as Authorization: Bearer <key>."}</p>
      ${allowancePanel(allowance)}
      <section aria-labelledby="list-heading">
        <h2 id="list-heading">${user!.role === "admin" ? "All keys" : "Your keys"}</h2>
        ${createForm(page, state)}
        <div class="table-wrap">${await keyRows(page, newestFirst(keys))}</div>
      </section>`,
  };
}

/** Parses the create form; collects every problem rather than stopping at the first. */
function parseCreate(page: PageRequest): { input?: { name: string; hourlyLimit: number | null; expiresAt: Date | null; scopes: ApiKeyScope[] }; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const allowance = allowanceOf(page.services, page.user!);
  const limitText = (page.form.hourlyLimit ?? "").trim();
  let hourlyLimit: number | null = null;
  if (limitText !== "") {
    const limit = Number(limitText);
    if (!/^\d+$/.test(limitText) || limit < 1 || limit > Math.min(allowance, API_KEY_HOURLY_LIMIT_MAX)) {
      errors.hourlyLimit = `Hourly limit must be a whole number from 1 to ${count(allowance)}.`;
    } else hourlyLimit = limit;
  } else if (allowance < page.services.config.quota.defaultLimit) {
    hourlyLimit = allowance; // the service default would exceed this user's allowance
  }
  const dateText = (page.form.expiresOn ?? "").trim();
  let expiresAt: Date | null = null;
  if (dateText !== "") {
    const day = /^\d{4}-\d{2}-\d{2}$/.test(dateText) ? Date.parse(`${dateText}T00:00:00Z`) : Number.NaN;
    if (Number.isNaN(day)) errors.expiresAt = "Expiry must be a date like 2030-12-31.";
    else expiresAt = new Date(day + DAY_MS);
  }
  const scopes = page.formAll("scopes");
  return { input: { name: page.form.name ?? "", hourlyLimit, expiresAt, scopes: scopes as ApiKeyScope[] }, errors };
}

async function ownerLabel(services: AtelierServices, key: ApiKeyRecord): Promise<string> {
  if (key.ownerId === null) return "CLI (operator)";
  return (await services.accounts.getUser(key.ownerId))?.email ?? "Deleted user";
}

/** `jobs`: absent when the router runs no jobs, and then there are no webhooks to sign either. */
export function registerKeyPages(router: express.Router, services: AtelierServices, jobs: JobService | undefined): void {
  registerPage(router, services, {
    path: "/keys",
    title: "API keys",
    nav: { label: "API keys", order: 10 },
    access: "signed-in",
    get: (page) => keysPage(page, { values: {}, scopes: [], errors: {} }),
    post: async (page) => {
      const { input, errors } = parseCreate(page);
      const state = { values: page.form, scopes: page.formAll("scopes"), errors };
      if (Object.keys(errors).length > 0 || !input) return keysPage(page, state);
      try {
        const { record, key } = await services.keys.create({ ...input, ownerId: page.user!.id, ownerMaxActiveKeys: services.config.console.maxKeysPerUser });
        services.logger.info({ part: "console", userId: page.user!.id, keyId: record.id }, "API key created in the console");
        await putFlash(page, { kind: "api-key", keyId: record.id, name: record.name, secret: key });
        return redirect(`/keys/${record.id}/created`);
      } catch (error) {
        return keysPage(page, { ...state, errors: { ...errors, ...fieldErrors(error) } });
      }
    },
  });

  registerPage(router, services, {
    path: "/keys/:id/created",
    title: "API keys",
    access: "signed-in",
    get: async (page) => {
      const created = await takeFlash(page, "api-key", (flash) => flash.keyId === page.params.id);
      const origin = consoleOrigin(page.req, services.config.console.publicOrigin);
      return created
        ? keysPage(page, { values: {}, scopes: [], errors: {} }, newKeyPanel(created.name, created.secret, origin))
        : keysPage(page, { values: {}, scopes: [], errors: {}, open: true }, secretGonePanel());
    },
  });

  registerPage(router, services, {
    path: "/keys/:id",
    title: "API key",
    access: "signed-in",
    get: async (page) => {
      const key = await visibleKey(services, page.user!, page.params.id!);
      if (!key) return notFound();
      return keyDetail(page, key, {}, await ownerLabel(services, key), jobs !== undefined);
    },
    post: async (page) => {
      const key = await visibleKey(services, page.user!, page.params.id!);
      if (!key) return notFound();
      try {
        await services.keys.rename(key.id, page.form.name ?? "");
      } catch (error) {
        return keyDetail(page, key, fieldErrors(error), await ownerLabel(services, key), jobs !== undefined);
      }
      return redirect(`/keys/${key.id}`, "Key renamed.");
    },
  });

  if (jobs) {
    registerPage(router, services, {
      path: "/keys/:id/webhook-secret",
      title: "Webhook signing secret",
      access: "signed-in",
      post: async (page) => {
        const key = await ownKey(services, page.user!, page.params.id!);
        if (!key) return notFound();
        const rotate = page.form.action === "rotate";
        const secret = rotate ? await jobs.rotateSigningSecret(key.id) : await jobs.signingSecret(key.id);
        if (rotate) services.logger.info({ part: "console", userId: page.user!.id, keyId: key.id }, "webhook signing secret rotated in the console");
        await putFlash(page, { kind: "webhook-secret", keyId: key.id, secret, rotated: rotate });
        return redirect(`/keys/${key.id}/webhook-secret`);
      },
      get: async (page) => {
        const key = await ownKey(services, page.user!, page.params.id!);
        if (!key) return notFound();
        const shown = await takeFlash(page, "webhook-secret", (flash) => flash.keyId === key.id);
        if (!shown) return redirect(`/keys/${key.id}`, "The signing secret is shown on request only: Show signing secret shows it again.");
        return keyDetail(page, key, {}, await ownerLabel(services, key), true, { secret: shown.secret, rotated: shown.rotated });
      },
    });
  }

  registerPage(router, services, {
    path: "/keys/:id/revoke",
    title: "Revoke key",
    access: "signed-in",
    get: async (page) => {
      const key = await visibleKey(services, page.user!, page.params.id!);
      if (!key) return notFound();
      if (key.revokedAt) return redirect(`/keys/${key.id}`, "This key is already revoked.");
      return {
        title: `Revoke “${key.name}”?`,
        main: html`<p>Programs using <code>${keyPrefix(key)}</code> will get <code>401 Unauthorized</code> from their next request. This cannot be undone.</p>
          <form method="post" action="/keys/${key.id}/revoke" class="form actions">
            ${csrfField(page.csrfToken)}
            <button type="submit" class="button button-danger">Revoke key</button>
            <a href="/keys" class="button button-quiet">Cancel</a>
          </form>`,
      };
    },
    post: async (page) => {
      const key = await visibleKey(services, page.user!, page.params.id!);
      if (!key) return notFound();
      await services.keys.revoke(key.id);
      services.logger.info({ part: "console", userId: page.user!.id, keyId: key.id }, "API key revoked in the console");
      return redirect("/keys", `Key “${key.name}” revoked.`);
    },
  });
}

function signingSecretPanel(page: PageRequest, key: ApiKeyRecord, shown: { secret: string; rotated: boolean } | undefined): Html {
  return html`<section class="panel${shown ? " panel-success" : ""}" aria-labelledby="webhook-secret-heading"${shown ? html` data-autofocus tabindex="-1"` : html``}>
    <h2 id="webhook-secret-heading">Webhook signing secret</h2>
    <p>Atelier signs the webhooks of this key's jobs (<code>webhookUrl</code>) as Standard Webhooks do: HMAC-SHA256 with this secret, in the <code>webhook-signature</code> header. Verify them with it.</p>
    ${
      shown
        ? html`${shown.rotated ? html`<p class="warning"><strong>Secret rotated.</strong> Webhooks are signed with this new secret from now on; give it to your receivers.</p>` : html``}
          <div class="secret-row">
            <label for="webhook-secret">Signing secret</label>
            <input id="webhook-secret" type="text" readonly value="${shown.secret}" class="secret" spellcheck="false" autocomplete="off">
            <button type="button" class="button" data-copy-target="webhook-secret">Copy</button>
            <span class="copy-status" role="status" aria-live="polite"></span>
          </div>`
        : html``
    }
    <div class="actions">
      ${shown ? html`` : html`<form method="post" action="/keys/${key.id}/webhook-secret" class="inline-form">${csrfField(page.csrfToken)}<button type="submit" name="action" value="show" class="button">Show signing secret</button></form>`}
      <form method="post" action="/keys/${key.id}/webhook-secret" class="inline-form">${csrfField(page.csrfToken)}<button type="submit" name="action" value="rotate" class="button button-quiet">Rotate signing secret</button></form>
    </div>
    <p class="hint">Rotating replaces the secret at once: every delivery from then on, retries of earlier jobs included, is signed with the new one.</p>
  </section>`;
}

function keyDetail(
  page: PageRequest,
  key: ApiKeyRecord,
  errors: Record<string, string>,
  owner: string,
  webhooks: boolean,
  shownSecret?: { secret: string; rotated: boolean },
): PageResponse {
  const status = statusOf(key, Date.now());
  // The key's jobs and its signing secret are its owner's alone (key-owner.ts).
  const ownerParts = webhooks && ownsKey(page.user!, key);
  return {
    status: Object.keys(errors).length > 0 ? 400 : 200,
    title: `API key “${key.name}”`,
    main: html`<dl class="details">
        <dt>Key</dt><dd><code>${keyPrefix(key)}</code></dd>
        ${page.user!.role === "admin" ? html`<dt>Owner</dt><dd>${owner}</dd>` : html``}
        <dt>Status</dt><dd><span class="status status-${status}">${status}</span></dd>
        <dt>Created</dt><dd>${time(key.createdAt)}</dd>
        <dt>Last used</dt><dd>${time(key.lastUsedAt)}${key.lastUsedOperation ? html` (${key.lastUsedOperation})` : html``}</dd>
        <dt>Hourly limit</dt><dd>${count(key.hourlyLimit ?? page.services.config.quota.defaultLimit)}</dd>
        <dt>Expires</dt><dd>${time(key.expiresAt, "Never")}</dd>
        <dt>Scopes</dt><dd>${key.scopes ? key.scopes.join(", ") : "All operations"}</dd>
      </dl>
      <section class="panel" aria-labelledby="rename-heading">
        <h2 id="rename-heading">Rename</h2>
        ${errorSummary(errors)}
        <form method="post" action="/keys/${key.id}" class="form">
          ${csrfField(page.csrfToken)}
          ${field({ name: "name", label: "Name", value: key.name, required: true, error: errors.name, attributes: html`maxlength="100"` })}
          <button type="submit" class="button">Rename</button>
        </form>
      </section>
      ${ownerParts ? signingSecretPanel(page, key, shownSecret) : html``}
      ${key.revokedAt ? html`` : html`<form method="get" action="/keys/${key.id}/revoke" class="form"><button type="submit" class="button button-danger">Revoke</button></form>`}
      <p>${ownerParts ? html`<a href="/jobs?key=${key.id}">Jobs of this key</a> · ` : html``}<a href="/keys">Back to API keys</a></p>`,
  };
}
