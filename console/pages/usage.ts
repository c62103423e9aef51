/**
 * The Usage page: requests over the last 24 hours or 30 days by operation and status, compute
 * seconds per operation, as charts (chart.js, served from node_modules) and as tables with the
 * same numbers, plus a CSV export. A member sees their own keys (all or one); an admin sees the
 * whole service by default, with users, keys, top keys and error rates, and can narrow it to one
 * user or key. Numbers come from the usage service (server/usage/), which the API path feeds.
 */
import { createRequire } from "node:module";
import path from "node:path";
import type express from "express";
import type { Request, Response } from "express";
import type { User } from "../../server/accounts/account-store.js";
import type { AtelierServices } from "../../server/context.js";
import type { ApiKeyRecord } from "../../server/keys/api-key-store.js";
import { usageCsv } from "../../server/usage/usage-csv.js";
import { USAGE_WINDOWS, type UsageReport, type UsageScope, type UsageWindow } from "../../server/usage/usage-service.js";
import type { KeyUsage } from "../../server/usage/usage-store.js";
import { registerVendorAsset } from "../server/assets.js";
import { html, raw, type Html } from "../server/html.js";
import { currentUser, registerPage, requireSession, type PageRequest, type PageResponse } from "../server/pages.js";
import { count } from "./format.js";
import { keyPrefix } from "./keys.js";

const require = createRequire(import.meta.url);

/** Whose usage a request asks for, once checked against what the user may see. */
interface UsageSelection {
  window: UsageWindow;
  scope: UsageScope;
  /** Keys the user may pick from: their own, or every key for an admin. */
  keys: ApiKeyRecord[];
  users: User[];
  keyId: string | undefined;
  userId: string | undefined;
}

function windowOf(value: string | undefined): UsageWindow {
  return value !== undefined && value in USAGE_WINDOWS ? (value as UsageWindow) : "24h";
}

/**
 * The selection for `query`, or null when it names a key or user the viewer may not see (answered
 * as not found, like a key that does not exist).
 */
async function selectionFor(services: AtelierServices, user: User, query: Record<string, string | undefined>): Promise<UsageSelection | null> {
  const admin = user.role === "admin";
  const keys = await services.keys.list(admin ? {} : { ownerId: user.id });
  const users = admin ? await services.accounts.listUsers() : [];
  const keyId = query.key || undefined;
  const userId = admin ? query.user || undefined : undefined;
  const window = windowOf(query.window);
  if (keyId !== undefined) {
    if (!keys.some((key) => key.id === keyId)) return null;
    return { window, scope: { keyIds: [keyId] }, keys, users, keyId, userId: undefined };
  }
  if (userId !== undefined) {
    // "cli": the keys the operator made with the keys CLI (no console owner).
    const owner = userId === "cli" ? null : users.find((candidate) => candidate.id === userId)?.id;
    if (owner === undefined) return null;
    return { window, scope: { keyIds: keys.filter((key) => key.ownerId === owner).map((key) => key.id) }, keys, users, keyId: undefined, userId };
  }
  return { window, scope: admin ? undefined : { keyIds: keys.map((key) => key.id) }, keys, users, keyId: undefined, userId: undefined };
}

function percent(part: number, whole: number): string {
  return whole === 0 ? "–" : `${((100 * part) / whole).toFixed(1)}%`;
}

function seconds(value: number): string {
  return value < 10 ? value.toFixed(2) : value.toFixed(1);
}

/** The report as JSON inside a data block: `<` escaped so no value can close the element. */
function reportData(report: UsageReport): Html {
  const json = JSON.stringify(report).replace(/</g, "\\u003c");
  return html`<script type="application/json" id="usage-data">${raw(json)}</script>`;
}

function filterForm(selection: UsageSelection, admin: boolean): Html {
  const option = (value: string, label: string, selected: boolean) => html`<option value="${value}"${selected ? html` selected` : html``}>${label}</option>`;
  return html`<form method="get" action="/usage" class="filters" id="usage-filters">
    <div class="field">
      <label for="usage-window">Period</label>
      <select id="usage-window" name="window">${Object.entries(USAGE_WINDOWS).map(([value, { label }]) => option(value, label, value === selection.window))}</select>
    </div>
    ${
      admin
        ? html`<div class="field">
            <label for="usage-user">User</label>
            <select id="usage-user" name="user">
              ${option("", "Whole service", selection.userId === undefined)}
              ${option("cli", "CLI keys (operator)", selection.userId === "cli")}
              ${selection.users.map((user) => option(user.id, `${user.displayName} (${user.email})`, user.id === selection.userId))}
            </select>
          </div>`
        : html``
    }
    <div class="field">
      <label for="usage-key">Key</label>
      <select id="usage-key" name="key">
        ${option("", admin ? "Every key" : "All my keys", selection.keyId === undefined)}
        ${selection.keys.map((key) => option(key.id, `${key.name} (${keyPrefix(key)})${key.revokedAt ? " – revoked" : ""}`, key.id === selection.keyId))}
      </select>
    </div>
    <button type="submit" class="button">Show</button>
  </form>`;
}

function chart(id: string, title: string, description: string, tall = false): Html {
  return html`<figure class="usage-chart${tall ? " usage-chart-tall" : ""}">
    <figcaption>${title}</figcaption>
    <div class="usage-canvas"><canvas id="${id}" role="img" aria-label="${description}"></canvas></div>
  </figure>`;
}

function operationTable(report: UsageReport): Html {
  if (report.byOperation.length === 0) return html`<p class="muted">No requests in this period.</p>`;
  return html`<table class="data-table">
    <caption>Requests by operation</caption>
    <thead><tr><th scope="col">Operation</th><th scope="col">Requests</th><th scope="col">Errors</th><th scope="col">Error rate</th><th scope="col">Compute seconds</th><th scope="col">By status</th></tr></thead>
    <tbody>${report.byOperation.map(
      (row) => html`<tr>
        <th scope="row" data-label="Operation"><code>${row.operation}</code></th>
        <td data-label="Requests">${count(row.requests)}</td>
        <td data-label="Errors">${count(row.errors)}</td>
        <td data-label="Error rate">${percent(row.errors, row.requests)}</td>
        <td data-label="Compute seconds">${seconds(row.computeSeconds)}</td>
        <td data-label="By status"><span>${Object.entries(row.statuses).map(([status, requests], index) => html`${index > 0 ? ", " : ""}<span class="status-code status-${status.charAt(0)}xx">${status}</span>: ${count(requests)}`)}</span></td>
      </tr>`,
    )}</tbody>
  </table>`;
}

function keyTable(caption: string, rows: KeyUsage[], keys: Map<string, ApiKeyRecord>, owners: Map<string, User> | undefined): Html {
  if (rows.length === 0) return html``;
  return html`<table class="data-table">
    <caption>${caption}</caption>
    <thead><tr><th scope="col">Key</th>${owners ? html`<th scope="col">Owner</th>` : html``}<th scope="col">Requests</th><th scope="col">Errors</th><th scope="col">Error rate</th><th scope="col">Compute seconds</th></tr></thead>
    <tbody>${rows.map((row) => {
      const key = keys.get(row.keyId);
      const owner = key?.ownerId ? owners?.get(key.ownerId) : undefined;
      return html`<tr>
        <th scope="row" data-label="Key"><span>${key ? html`<a href="/usage?key=${row.keyId}">${key.name}</a> <code>${keyPrefix(key)}</code>` : html`<code>atl_${row.keyId}_…</code>`}</span></th>
        ${owners ? html`<td data-label="Owner">${key?.ownerId === null ? "CLI (operator)" : (owner?.email ?? "Deleted user")}</td>` : html``}
        <td data-label="Requests">${count(row.requests)}</td>
        <td data-label="Errors">${count(row.errors)}</td>
        <td data-label="Error rate">${percent(row.errors, row.requests)}</td>
        <td data-label="Compute seconds">${seconds(row.computeMs / 1000)}</td>
      </tr>`;
    })}</tbody>
  </table>`;
}

function csvLink(selection: UsageSelection): string {
  const query = new URLSearchParams({ window: selection.window });
  if (selection.keyId) query.set("key", selection.keyId);
  if (selection.userId) query.set("user", selection.userId);
  return `/usage.csv?${query}`;
}

async function usagePage(page: PageRequest): Promise<Html | PageResponse> {
  const { services } = page;
  const user = page.user!;
  const admin = user.role === "admin";
  const selection = await selectionFor(services, user, page.query);
  if (!selection) return { status: 404, title: "Not found", main: html`<p>There is no such key or user, or it is not yours.</p><p><a href="/usage">Back to usage</a></p>` };
  const [report, topKeys] = await Promise.all([
    services.usage.report(selection.window, selection.scope),
    services.usage.topKeys(selection.window, selection.scope, 10),
  ]);
  const keysById = new Map(selection.keys.map((key) => [key.id, key]));
  const owners = admin ? new Map(selection.users.map((candidate) => [candidate.id, candidate])) : undefined;
  const now = Date.now();
  const inScope = selection.scope === undefined ? selection.keys : selection.keys.filter((key) => selection.scope!.keyIds.includes(key.id));
  const activeKeys = inScope.filter((key) => !key.revokedAt && !(key.expiresAt && key.expiresAt.getTime() <= now)).length;
  const period = USAGE_WINDOWS[selection.window].label.toLowerCase();
  const whole = admin && selection.scope === undefined;
  return html`
    <p class="lead">${whole ? "Every API call to this service" : selection.keyId ? "Calls made with this key" : admin ? "Calls made with this user's keys" : "Calls made with your API keys"} in the ${period}, counted by the API itself. Times are UTC.</p>
    ${filterForm(selection, admin)}
    <dl class="stats">
      <div><dt>Requests</dt><dd>${count(report.totals.requests)}</dd></div>
      <div><dt>Errors</dt><dd>${count(report.totals.errors)} <span class="muted">(${percent(report.totals.errors, report.totals.requests)})</span></dd></div>
      <div><dt>Compute seconds</dt><dd>${seconds(report.totals.computeSeconds)}</dd></div>
      ${whole ? html`<div><dt>Users</dt><dd>${count(selection.users.length)}</dd></div>` : html``}
      <div><dt>Active keys</dt><dd>${count(activeKeys)}</dd></div>
    </dl>
    <p><a class="button button-quiet" href="${csvLink(selection)}" download>Download CSV</a></p>
    <div class="usage-charts">
      ${chart("usage-requests-chart", `Requests per ${selection.window === "24h" ? "hour" : "day"} by operation`, `Bar chart of requests per ${selection.window === "24h" ? "hour" : "day"}, stacked by operation; the table below has the totals.`, true)}
      ${chart("usage-status-chart", "Requests by HTTP status", "Bar chart of requests by HTTP status; the table below lists them per operation.")}
      ${chart("usage-compute-chart", "Compute seconds by operation", "Bar chart of compute seconds by operation; the table below has the numbers.")}
    </div>
    ${operationTable(report)}
    ${keyTable(whole ? "Top keys" : "Requests by key", topKeys, keysById, owners)}
    ${reportData(report)}`;
}

/** GET /usage.csv: the hourly buckets behind the page, for spreadsheets. */
async function usageCsvRoute(services: AtelierServices, req: Request, res: Response): Promise<void> {
  const user = currentUser(res)!;
  const query = Object.fromEntries(Object.entries(req.query).map(([name, value]) => [name, typeof value === "string" ? value : undefined]));
  const selection = await selectionFor(services, user, query);
  if (!selection) {
    res.status(404).type("text/plain").send("There is no such key or user, or it is not yours.");
    return;
  }
  const rows = await services.usage.exportRows(selection.window, selection.scope);
  const names = new Map(selection.keys.map((key) => [key.id, key.name]));
  const day = new Date().toISOString().slice(0, 10);
  res.setHeader("Content-Disposition", `attachment; filename="atelier-usage-${selection.window}-${day}.csv"`);
  res.type("text/csv; charset=utf-8").send(usageCsv(rows, (id) => names.get(id)));
}

export function registerUsagePages(router: express.Router, services: AtelierServices): void {
  // chart.js exports no package.json; its main entry sits beside the UMD build in dist/.
  registerVendorAsset("chart.umd.min.js", path.join(path.dirname(require.resolve("chart.js")), "chart.umd.min.js"));
  registerPage(router, services, {
    path: "/usage",
    title: "Usage",
    nav: { label: "Usage", order: 20 },
    access: "signed-in",
    scripts: ["vendor/chart.umd.min.js", "usage.js"],
    styles: ["usage.css"],
    get: usagePage,
  });
  router.get("/usage.csv", requireSession, (req, res, next) => {
    usageCsvRoute(services, req, res).catch(next);
  });
}
