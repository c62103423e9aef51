/**
 * The Playground: one page per operation, with a form built from the operation's own zod input
 * schema (console/playground/schema-form.ts) and pickers built from the catalog's installed models
 * (console/playground/pickers.ts), help written for people (console/playground/field-help.ts), the
 * result shown as people expect it (a before/after slider, the improved prompt as text, downloads
 * named after the photo), the user's recent results, and the same call as a curl command that
 * uploads the file.
 *
 * Calls are real API calls charged to one of the user's keys: picked by id, with the session
 * (console/playground/session-calls.ts: the console never sees a secret), or pasted. Each runs as
 * a job whose progress the page follows, and Cancel stops the work (console/static/playground.js).
 */
import type express from "express";
import { z } from "zod";
import type { JobService } from "../../jobs/job-service.js";
import { GENERATION_OPTIONS } from "../../models/catalog/catalog-types.js";
import type { AtelierServices } from "../../server/context.js";
import { isActiveKey } from "../../server/keys/api-key-store.js";
import { OPERATION_HELP, type OperationHelp } from "../playground/field-help.js";
import { defaultGenerationModel, modelsOf, playgroundChoices, schedulers, type ModelChoice, type PlaygroundChoices } from "../playground/pickers.js";
import { PLAYGROUND_OPERATIONS, playgroundOperation, type PlaygroundOperation } from "../playground/playground-operations.js";
import { recentResults, registerPlaygroundJobRoutes, type GalleryItem } from "../playground/playground-jobs.js";
import { SESSION_KEY_HEADER } from "../playground/session-calls.js";
import { StylePreviews } from "../playground/style-previews.js";
import { formFields, type FormField } from "../playground/schema-form.js";
import { consoleOrigin } from "../server/console-origin.js";
import { html, type Html } from "../server/html.js";
import { registerPage, requireSession, type PageRequest, type PageResponse } from "../server/pages.js";
import { time } from "./format.js";
import { keyPrefix } from "./keys.js";

const GALLERY_SIZE = 12;
const TUNING_OPTIONS = new Set<string>(GENERATION_OPTIONS);
/** Query parameters a page may be opened with: a prompt to start from ("Generate with this prompt"). */
const pageQuery = z.object({ prompt: z.string().max(2000).optional().catch(undefined) });

/** Schema descriptions mark code with backticks, as in the OpenAPI document; shown as `<code>`. */
export function withCode(text: string): Html {
  return html`${text.split("`").map((part, index) => (index % 2 === 1 ? html`<code>${part}</code>` : part))}`;
}

interface FieldContext {
  operation: PlaygroundOperation;
  help: OperationHelp;
  choices: PlaygroundChoices;
  admin: boolean;
  prompt: string | undefined;
}

const helpOf = (context: FieldContext, field: FormField) => context.help.fields[field.name];
const labelOf = (context: FieldContext, field: FormField) => context.help.labels?.[field.name] ?? field.label;

function hint(context: FieldContext, field: FormField, id: string): Html {
  const text = helpOf(context, field);
  return text ? html`<p class="hint" id="${id}-hint">${text}</p>` : html``;
}

function describedBy(context: FieldContext, field: FormField, id: string): Html {
  return html` aria-describedby="${helpOf(context, field) ? `${id}-hint ` : ""}${id}-error"`;
}

/** Where the API's complaint about this field goes (playground.js fills it). */
function errorSlot(id: string): Html {
  return html`<p class="field-error" id="${id}-error" hidden></p>`;
}

function optional(field: FormField): Html {
  return field.required ? html`` : html` <span class="optional">(optional)</span>`;
}

/** A link to install what is missing: the Models page (its Install buttons are for admins). */
function missing(context: FieldContext, models: ModelChoice[], what: string): Html {
  const absent = models.filter((model) => !model.usable);
  if (absent.length === 0) return html``;
  // Named when few; a long list of names says less than the count.
  const names = absent.length <= 3 ? html` (${absent.map((model, index) => html`${index > 0 ? ", " : ""}${model.name}`)})` : html``;
  return html`<p class="playground-missing">${absent.length} more ${what} can be installed${names}.
    ${context.admin ? html`<a class="button button-quiet" href="/models">Install on the Models page</a>` : html`An admin installs them on the <a href="/models">Models page</a>.`}</p>`;
}

function imageField(context: FieldContext, field: FormField): Html {
  const id = `field-${field.name}`;
  return html`<fieldset class="field image-field" data-field-wrapper="${field.name}">
    <legend>${labelOf(context, field)}${optional(field)}</legend>
    ${hint(context, field, id)}
    <div class="drop-zone" id="${field.name}-drop">
      <label for="${id}-file">Image file</label>
      <input type="file" id="${id}-file" accept="image/png,image/jpeg,image/webp,image/gif,image/avif,image/tiff" data-image-for="${field.name}">
      <p class="muted">Choose a file, or drop an image on this box.</p>
    </div>
    <label for="${id}">Image URL</label>
    <input type="url" id="${id}" data-field="${field.name}" data-control="image" inputmode="url" placeholder="https://example.com/photo.jpg"${describedBy(context, field, id)}>
    ${errorSlot(id)}
    <div class="image-preview" id="${field.name}-preview" aria-live="polite"></div>
  </fieldset>`;
}

interface Choice {
  value: string;
  label: string;
  /** Extra attributes for playground.js (e.g. the tuning options a model takes). */
  takes?: readonly string[];
}

function select(id: string, name: string, choices: Choice[], selected: string, attributes: Html): Html {
  return html`<select id="${id}" data-field="${name}" data-control="select"${attributes}>
    ${choices.map(
      (choice) =>
        html`<option value="${choice.value}"${choice.value === selected ? html` selected` : html``}${choice.takes ? html` data-takes="${choice.takes.join(" ")}"` : html``}>${choice.label}</option>`,
    )}
  </select>`;
}

/** Model picker: Automatic, then the installed models of the operation's task. */
function modelChoices(context: FieldContext): Choice[] {
  const models = modelsOf(context.choices, context.operation.task).filter((model) => model.usable);
  const automatic = context.operation.task === "generate" ? defaultGenerationModel(context.choices) : undefined;
  return [
    { value: "", label: automatic ? `Automatic (${automatic.name})` : "Automatic", ...(context.operation.task === "generate" ? { takes: automatic?.options ?? [] } : {}) },
    ...models.map((model) => ({ value: model.id, label: model.name, ...(context.operation.task === "generate" ? { takes: model.options } : {}) })),
  ];
}

function styleField(context: FieldContext, field: FormField, id: string): Html {
  const styles = modelsOf(context.choices, "style-transfer");
  const usable = styles.filter((style) => style.usable);
  const choices = usable.map((style) => ({ value: style.id, label: style.name }));
  return html`${select(id, field.name, choices, usable[0]?.id ?? "", html` required${describedBy(context, field, id)}`)}
    ${usable.length === 0 ? html`<p class="playground-missing">No style is installed yet.</p>` : html``}
    <ul class="style-previews" aria-label="Style previews">
      ${usable.map(
        (style) => html`<li><button type="button" class="style-preview" data-style="${style.id}" aria-pressed="${String(style.id === usable[0]?.id)}">
          <img src="/playground/styles/${style.id}.jpg" alt="" width="96" height="72" loading="lazy">
          <span>${style.name}</span></button></li>`,
      )}
    </ul>
    ${missing(context, styles, "styles")}`;
}

const REPLACEMENTS: Choice[] = [
  { value: "", label: "Transparent" },
  { value: "white", label: "White" },
  { value: "black", label: "Black" },
  { value: "blur", label: "The original background, blurred" },
  { value: "colour", label: "A colour of my choice" },
];

function replacementField(context: FieldContext, field: FormField, id: string): Html {
  const scenes = modelsOf(context.choices, "generate").some((model) => model.usable && model.photographic);
  const choices = scenes ? [...REPLACEMENTS, { value: "scene", label: "A scene I describe" }] : REPLACEMENTS;
  return html`<select id="${id}" data-field="${field.name}" data-control="replacement"${describedBy(context, field, id)}>
      ${choices.map((choice) => html`<option value="${choice.value}">${choice.label}</option>`)}
    </select>
    <div class="replacement-extra" data-replacement-for="colour" hidden>
      <label for="${id}-colour">Colour</label>
      <input type="color" id="${id}-colour" value="#3b82f6">
    </div>
    <div class="replacement-extra" data-replacement-for="scene" hidden>
      <label for="${id}-scene">Describe the scene</label>
      <input type="text" id="${id}-scene" maxlength="200" placeholder="a beach at sunset">
    </div>`;
}

function presetField(context: FieldContext, field: FormField, id: string, presets: { id: string; name: string }[]): Html {
  return select(id, field.name, [{ value: "", label: "None" }, ...presets.map((preset) => ({ value: preset.id, label: preset.name }))], "", describedBy(context, field, id));
}

const QUALITY_LABELS: Record<string, string> = { fast: "Fast", balanced: "Balanced", max: "Best detail (slow)" };

function inputField(context: FieldContext, field: FormField): Html {
  if (field.control === "image") return imageField(context, field);
  const { operation } = context;
  const id = `field-${field.name}`;
  const label = labelOf(context, field);
  const data = html`data-field="${field.name}" data-control="${field.control}"${field.default !== undefined ? html` data-default="${String(field.default)}"` : html``}`;
  const required = field.required ? html` required` : html``;
  // Generation tuning a model may not take, and the upscale quality that applies only to Automatic: playground.js hides them.
  const wrapper =
    operation.task === "generate" && TUNING_OPTIONS.has(field.name)
      ? html` data-tuning-option="${field.name}"`
      : operation.task === "upscale" && field.name === "quality"
        ? html` data-automatic-only`
        : html``;
  if (field.control === "checkbox") {
    return html`<div class="field checkbox" data-field-wrapper="${field.name}"${wrapper}>
      <input type="checkbox" id="${id}" ${data}${field.default === true ? html` checked` : html``}${describedBy(context, field, id)}>
      <label for="${id}">${label}</label>
      ${hint(context, field, id)}
      ${errorSlot(id)}
    </div>`;
  }
  let control: Html;
  if (field.name === "model" && operation.task !== "style-transfer") {
    control = html`${select(id, field.name, modelChoices(context), "", describedBy(context, field, id))}${missing(context, modelsOf(context.choices, operation.task), "models")}`;
  } else if (field.name === "style" && operation.task === "style-transfer") {
    control = styleField(context, field, id);
  } else if (field.name === "scheduler" && operation.task === "generate") {
    control = select(id, field.name, [{ value: "", label: "The model's own" }, ...schedulers(context.choices).map((name) => ({ value: name, label: name }))], "", describedBy(context, field, id));
  } else if (field.name === "replacement" && operation.task === "background-remove") {
    control = replacementField(context, field, id);
  } else if ((field.name === "style" || field.name === "mood") && operation.task === "prompt-improve") {
    control = presetField(context, field, id, field.name === "style" ? context.choices.promptStyles : context.choices.promptMoods);
  } else if (field.control === "select") {
    control = html`<select id="${id}" ${data}${describedBy(context, field, id)}${required}>
      ${field.required || field.default !== undefined ? html`` : html`<option value="">Automatic</option>`}
      ${(field.options ?? []).map((option) => html`<option value="${option}"${option === field.default ? html` selected` : html``}>${QUALITY_LABELS[option] ?? option}</option>`)}
    </select>`;
  } else if (field.control === "textarea") {
    const value = field.name === "prompt" ? (context.prompt ?? "") : "";
    control = html`<textarea id="${id}" ${data} rows="3"${field.maxLength !== undefined ? html` maxlength="${field.maxLength}"` : html``}${field.example ? html` placeholder="${field.example}"` : html``}${describedBy(context, field, id)}${required}>${value}</textarea>`;
  } else if (field.control === "integer" || field.control === "number") {
    control = html`<input type="number" id="${id}" ${data} step="${field.control === "integer" ? "1" : "any"}"${field.minimum !== undefined ? html` min="${field.minimum}"` : html``}${field.maximum !== undefined ? html` max="${field.maximum}"` : html``}${typeof field.default === "number" ? html` value="${field.default}"` : html``}${describedBy(context, field, id)}${required}>`;
  } else {
    control = html`<input type="text" id="${id}" ${data} autocomplete="off"${field.maxLength !== undefined ? html` maxlength="${field.maxLength}"` : html``}${field.example ? html` placeholder="${field.example}"` : html``}${describedBy(context, field, id)}${required}>`;
  }
  return html`<div class="field" data-field-wrapper="${field.name}"${wrapper}>
    <label for="${id}">${label}${optional(field)}</label>
    ${hint(context, field, id)}
    ${control}
    ${errorSlot(id)}
  </div>`;
}

function operationLinks(current: string | undefined): Html {
  return html`<nav class="subnav" aria-label="Operations"><ul>${PLAYGROUND_OPERATIONS.map(
    (operation) => html`<li><a href="/playground/${operation.slug}"${operation.slug === current ? html` aria-current="page"` : html``}>${operation.summary}</a></li>`,
  )}</ul></nav>`;
}

async function indexPage(): Promise<Html> {
  return html`<p class="lead">Try each operation on your own pictures. Every call here is charged to one of your API keys, as any other call, and shows up in Usage.</p>
    <ul class="card-list">${PLAYGROUND_OPERATIONS.map(
      (operation) => html`<li class="card">
        <h2><a href="/playground/${operation.slug}">${operation.summary}</a></h2>
        <p>${OPERATION_HELP[operation.slug]?.lead ?? ""}</p>
      </li>`,
    )}</ul>`;
}

/** The key picker: the user's active keys by name (charged with the session), or a pasted secret. */
async function keyField(page: PageRequest): Promise<Html> {
  const keys = (await page.services.keys.list({ ownerId: page.user!.id })).filter((key) => isActiveKey(key, Date.now()));
  return html`<fieldset class="field key-field">
    <legend>Key</legend>
    <label for="playground-key-choice">Charge to</label>
    <p class="hint" id="playground-key-choice-hint">${
      keys.length > 0
        ? html`Each call counts against the chosen key's hourly quota and shows up in its usage.`
        : html`You have no active key yet: <a href="/keys">create one on the API keys page</a>, or paste the secret of a key.`
    }</p>
    <select id="playground-key-choice" aria-describedby="playground-key-choice-hint" data-session-header="${SESSION_KEY_HEADER}">
      ${keys.map((key) => html`<option value="${key.id}">${key.name} (${keyPrefix(key)})</option>`)}
      <option value="">Paste a key's secret instead</option>
    </select>
    <div class="playground-paste" id="playground-paste"${keys.length > 0 ? html` hidden` : html``}>
      <label for="playground-key">API key</label>
      <input type="password" id="playground-key" autocomplete="off" spellcheck="false">
      <div class="checkbox">
        <input type="checkbox" id="playground-keep-key">
        <label for="playground-keep-key">Keep the key for this browser tab</label>
      </div>
    </div>
  </fieldset>`;
}

function gallery(items: GalleryItem[]): Html {
  return html`<section aria-labelledby="playground-gallery-heading" class="playground-output">
    <h2 id="playground-gallery-heading">Your recent results</h2>
    <ul class="playground-gallery" id="playground-gallery">
      ${items.map(
        (item) => html`<li><a href="/jobs/${item.jobId}"><img src="${item.imageUrl}" alt="${item.operation} result, ${item.width} × ${item.height} px" loading="lazy"><span>${item.operation}, ${time(item.createdAt)}</span></a></li>`,
      )}
    </ul>
    ${items.length === 0 ? html`<p class="muted" id="playground-gallery-empty">Your pictures will show here.</p>` : html``}
  </section>`;
}

async function operationPage(page: PageRequest, jobs: JobService | undefined): Promise<Html | PageResponse> {
  const operation = playgroundOperation(page.params.operation ?? "");
  if (!operation) {
    return { status: 404, title: "No such operation", main: html`<p>The playground has no operation “${page.params.operation ?? ""}”.</p>${operationLinks(undefined)}` };
  }
  const help = OPERATION_HELP[operation.slug] ?? { lead: operation.description, fields: {} };
  const choices = await playgroundChoices(page.services, String(page.res.getHeader("x-request-id") ?? "console"));
  const context: FieldContext = { operation, help, choices, admin: page.user!.role === "admin", prompt: pageQuery.parse(page.query).prompt };
  const items = jobs ? await recentResults(page.services, jobs, page.user!, GALLERY_SIZE) : [];
  return {
    title: `Playground: ${operation.summary}`,
    main: html`${operationLinks(operation.slug)}
    <p class="lead">${help.lead} <a href="/reference">Every option in the API reference</a>.</p>
    <form id="playground-form" class="playground-form" data-api-path="${operation.path}" data-operation="${operation.slug}" novalidate>
      ${await keyField(page)}
      ${formFields(operation.input).map((field) => inputField(context, field))}
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
    ${jobs ? gallery(items) : html``}
    <section aria-labelledby="playground-curl-heading" class="playground-output">
      <h2 id="playground-curl-heading">The same call with curl</h2>
      <p class="hint" id="playground-curl-hint">Set your key's secret and this service's address first (<code>export ATELIER_API_KEY=atl_…</code> and <code>export ATELIER_BASE_URL=${consoleOrigin(page.req, page.services.config.console.publicOrigin)}</code>), then run it in the folder that holds your picture.</p>
      <pre class="code-block"><code id="playground-curl">curl -sS -X POST "$ATELIER_BASE_URL/api${operation.path}" -H "Authorization: Bearer $ATELIER_API_KEY"</code></pre>
      <button type="button" class="button button-quiet" id="playground-copy-curl">Copy command</button>
    </section>`,
  };
}

export function registerPlaygroundPages(router: express.Router, services: AtelierServices, jobs?: JobService): void {
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
    get: (page) => operationPage(page, jobs),
  });
  const previews = new StylePreviews(services);
  router.get("/playground/styles/:style.jpg", requireSession, previews.handler());
  if (jobs) registerPlaygroundJobRoutes(router, services, jobs);
}
