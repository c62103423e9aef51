/**
 * The Playground: one page per operation, with a form built from the operation's own zod input
 * schema (console/playground/schema-form.ts), an image picked, dropped or given by URL, the result
 * with its size and a download link, and the equivalent curl command. The browser calls the REST
 * endpoint itself with one of the user's API keys (typed or pasted: secrets are shown once and
 * stored hashed, so the console cannot fill one in), so each call is authenticated, counted and
 * charged to that key's quota like any other. It runs as a job, so the page shows the workers' real
 * progress and Cancel stops the work (console/static/playground.js).
 */
import type express from "express";
import type { AtelierServices } from "../../server/context.js";
import { MODEL_CATALOG } from "../../models/catalog/model-catalog.js";
import { PLAYGROUND_OPERATIONS, playgroundOperation, type PlaygroundOperation } from "../playground/playground-operations.js";
import { formFields, type FormField } from "../playground/schema-form.js";
import { consoleOrigin } from "../server/console-origin.js";
import { html, type Html } from "../server/html.js";
import { registerPage, type PageRequest, type PageResponse } from "../server/pages.js";
import { keyPrefix } from "./keys.js";

/** Catalog ids suggested for a field: models of the operation's task (styles for `style`). */
function suggestions(operation: PlaygroundOperation, field: FormField): string[] {
  if (field.name === "model" && operation.task !== "style-transfer") return MODEL_CATALOG.filter((entry) => entry.task === operation.task).map((entry) => entry.id);
  if (field.name === "style" && operation.task === "style-transfer") return MODEL_CATALOG.filter((entry) => entry.task === "style-transfer").map((entry) => entry.id);
  return [];
}

/** Schema descriptions mark code with backticks, as in the OpenAPI document; shown as `<code>`. */
export function withCode(text: string): Html {
  return html`${text.split("`").map((part, index) => (index % 2 === 1 ? html`<code>${part}</code>` : part))}`;
}

function hintOf(field: FormField, id: string): Html {
  return field.description ? html`<p class="hint" id="${id}-hint">${withCode(field.description)}</p>` : html``;
}

function optional(field: FormField): Html {
  return field.required ? html`` : html` <span class="optional">(optional)</span>`;
}

function imageField(field: FormField): Html {
  const id = `field-${field.name}`;
  return html`<fieldset class="field image-field">
    <legend>${field.label}${optional(field)}</legend>
    ${hintOf(field, id)}
    <div class="drop-zone" id="${field.name}-drop">
      <label for="${id}-file">Image file</label>
      <input type="file" id="${id}-file" accept="image/png,image/jpeg,image/webp,image/gif,image/avif,image/tiff" data-image-for="${field.name}">
      <p class="muted">Choose a file, or drop an image on this box.</p>
    </div>
    <label for="${id}">Image URL</label>
    <input type="url" id="${id}" data-field="${field.name}" data-control="image" inputmode="url" placeholder="https://example.com/photo.jpg" aria-describedby="${id}-hint">
    <div class="image-preview" id="${field.name}-preview" aria-live="polite"></div>
  </fieldset>`;
}

function inputField(operation: PlaygroundOperation, field: FormField): Html {
  if (field.control === "image") return imageField(field);
  const id = `field-${field.name}`;
  const described = field.description ? html` aria-describedby="${id}-hint"` : html``;
  const data = html`data-field="${field.name}" data-control="${field.control}"${field.default !== undefined ? html` data-default="${String(field.default)}"` : html``}`;
  const required = field.required ? html` required` : html``;
  if (field.control === "checkbox") {
    return html`<div class="field checkbox">
      <input type="checkbox" id="${id}" ${data}${field.default === true ? html` checked` : html``}${described}>
      <label for="${id}">${field.label}</label>
      ${hintOf(field, id)}
    </div>`;
  }
  let control: Html;
  if (field.control === "select") {
    control = html`<select id="${id}" ${data}${described}${required}>
      ${field.required || field.default !== undefined ? html`` : html`<option value="">(default)</option>`}
      ${(field.options ?? []).map((option) => html`<option value="${option}"${option === field.default ? html` selected` : html``}>${option}</option>`)}
    </select>`;
  } else if (field.control === "textarea") {
    control = html`<textarea id="${id}" ${data} rows="3"${field.maxLength !== undefined ? html` maxlength="${field.maxLength}"` : html``}${field.example ? html` placeholder="${field.example}"` : html``}${described}${required}></textarea>`;
  } else if (field.control === "integer" || field.control === "number") {
    control = html`<input type="number" id="${id}" ${data} step="${field.control === "integer" ? "1" : "any"}"${field.minimum !== undefined ? html` min="${field.minimum}"` : html``}${field.maximum !== undefined ? html` max="${field.maximum}"` : html``}${typeof field.default === "number" ? html` value="${field.default}"` : html``}${described}${required}>`;
  } else {
    const options = suggestions(operation, field);
    const list = options.length > 0 ? `${id}-options` : undefined;
    control = html`<input type="text" id="${id}" ${data} autocomplete="off"${field.maxLength !== undefined ? html` maxlength="${field.maxLength}"` : html``}${field.pattern ? html` pattern="${field.pattern}"` : html``}${field.example ? html` placeholder="${field.example}"` : html``}${list ? html` list="${list}"` : html``}${described}${required}>
      ${list ? html`<datalist id="${list}">${options.map((option) => html`<option value="${option}"></option>`)}</datalist>` : html``}`;
  }
  return html`<div class="field">
    <label for="${id}">${field.label}${optional(field)}</label>
    ${hintOf(field, id)}
    ${control}
  </div>`;
}

function operationLinks(current: string | undefined): Html {
  return html`<nav class="subnav" aria-label="Operations"><ul>${PLAYGROUND_OPERATIONS.map(
    (operation) => html`<li><a href="/playground/${operation.slug}"${operation.slug === current ? html` aria-current="page"` : html``}>${operation.summary}</a></li>`,
  )}</ul></nav>`;
}

async function indexPage(): Promise<Html> {
  return html`<p class="lead">Try each operation with one of your API keys. Every call here is a real API call: it counts against the key's hourly quota and shows up in Usage.</p>
    <ul class="card-list">${PLAYGROUND_OPERATIONS.map(
      (operation) => html`<li class="card">
        <h2><a href="/playground/${operation.slug}">${operation.summary}</a></h2>
        <p><code>POST /api${operation.path}</code></p>
        <p>${withCode(operation.description)}</p>
      </li>`,
    )}</ul>`;
}

async function operationPage(page: PageRequest): Promise<Html | PageResponse> {
  const operation = playgroundOperation(page.params.operation ?? "");
  if (!operation) {
    return { status: 404, title: "No such operation", main: html`<p>The playground has no operation “${page.params.operation ?? ""}”.</p>${operationLinks(undefined)}` };
  }
  const keys = (await page.services.keys.list({ ownerId: page.user!.id })).filter((key) => !key.revokedAt && !(key.expiresAt && key.expiresAt.getTime() <= Date.now()));
  return {
    title: `Playground: ${operation.summary}`,
    main: html`${operationLinks(operation.slug)}
    <p class="lead">${withCode(operation.description)} <code>POST /api${operation.path}</code>, <a href="/reference">API reference</a>.</p>
    <form id="playground-form" class="playground-form" data-api-path="${operation.path}" data-operation="${operation.slug}" novalidate>
      <fieldset class="field key-field">
        <legend>Key</legend>
        <label for="playground-key">API key</label>
        <p class="hint" id="playground-key-hint">${
          keys.length > 0
            ? html`Paste the secret of one of your keys (${keys.map((key, index) => html`${index > 0 ? ", " : ""}${key.name} <code>${keyPrefix(key)}</code>`)}): the console never stores secrets. Calls are charged to that key's quota.`
            : html`You have no active key yet: <a href="/keys">create one on the API keys page</a>, then paste its secret here. Calls are charged to its quota.`
        }</p>
        <input type="password" id="playground-key" autocomplete="off" spellcheck="false" aria-describedby="playground-key-hint" required>
        <div class="checkbox">
          <input type="checkbox" id="playground-keep-key">
          <label for="playground-keep-key">Keep the key for this browser tab</label>
        </div>
      </fieldset>
      ${formFields(operation.input).map((field) => inputField(operation, field))}
      <div class="actions">
        <button type="submit" class="button button-primary" id="playground-run">Run</button>
        <button type="button" class="button button-quiet" id="playground-cancel" hidden>Cancel</button>
      </div>
      <div id="playground-progress" class="playground-progress" hidden>
        <label for="playground-progress-bar" id="playground-progress-label">Queued</label>
        <progress id="playground-progress-bar" max="1"></progress>
      </div>
      <p id="playground-status" class="playground-status" role="status" aria-live="polite"></p>
    </form>
    <section aria-labelledby="playground-result-heading" class="playground-output">
      <h2 id="playground-result-heading">Result</h2>
      <div id="playground-result"><p class="muted">Run the operation to see its result here.</p></div>
    </section>
    <section aria-labelledby="playground-curl-heading" class="playground-output">
      <h2 id="playground-curl-heading">The same call with curl</h2>
      <p class="hint" id="playground-curl-hint">Set the key and this service's address first (<code>export ATELIER_API_KEY=atl_…</code> and <code>export ATELIER_BASE_URL=${consoleOrigin(page.req, page.services.config.console.publicOrigin)}</code>); a chosen file is read from the current folder.</p>
      <pre class="code-block"><code id="playground-curl">curl -sS -X POST "$ATELIER_BASE_URL/api${operation.path}" -H "Authorization: Bearer $ATELIER_API_KEY" -H 'Content-Type: application/json' -d '{}'</code></pre>
      <button type="button" class="button button-quiet" id="playground-copy-curl">Copy command</button>
    </section>`,
  };
}

export function registerPlaygroundPages(router: express.Router, services: AtelierServices): void {
  registerPage(router, services, {
    path: "/playground",
    title: "Playground",
    nav: { label: "Playground", order: 30 },
    access: "signed-in",
    styles: ["playground.css"],
    get: indexPage,
  });
  registerPage(router, services, {
    path: "/playground/:operation",
    title: "Playground",
    access: "signed-in",
    scripts: ["playground.js"],
    styles: ["playground.css"],
    get: operationPage,
  });
}
