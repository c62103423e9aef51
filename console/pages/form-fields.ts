/**
 * Form controls with a visible label, an optional hint and error, all tied to the control
 * (`for`/`id`, `aria-describedby`, `aria-invalid`), so every control has an accessible name and
 * its error is read out with it.
 */
import { html, type Html } from "../server/html.js";

export interface FieldOptions {
  name: string;
  label: string;
  /** input type; default "text". */
  type?: string;
  value?: string;
  hint?: string;
  error?: string;
  required?: boolean;
  autocomplete?: string;
  /** Extra attributes as trusted markup, e.g. html`min="1"`. */
  attributes?: Html;
  /** Defaults to `field-<name>`. */
  id?: string;
}

export function field(options: FieldOptions): Html {
  const id = options.id ?? `field-${options.name}`;
  const described = [options.hint ? `${id}-hint` : "", options.error ? `${id}-error` : ""].filter(Boolean).join(" ");
  return html`<div class="field${options.error ? " field-invalid" : ""}">
    <label for="${id}">${options.label}${options.required ? html`` : html` <span class="optional">(optional)</span>`}</label>
    ${options.hint ? html`<p class="hint" id="${id}-hint">${options.hint}</p>` : html``}
    ${options.error ? html`<p class="error" id="${id}-error">${options.error}</p>` : html``}
    <input id="${id}" name="${options.name}" type="${options.type ?? "text"}"${options.value !== undefined ? html` value="${options.value}"` : html``}${options.required ? html` required` : html``}${options.autocomplete ? html` autocomplete="${options.autocomplete}"` : html``}${described ? html` aria-describedby="${described}"` : html``}${options.error ? html` aria-invalid="true"` : html``} ${options.attributes ?? html``}>
  </div>`;
}

/** A summary of a form's errors at its top, focused by console.js so keyboard and screen reader users land on it. */
export function errorSummary(errors: Record<string, string>): Html {
  const messages = Object.values(errors);
  if (messages.length === 0) return html``;
  return html`<div class="error-summary" role="alert" tabindex="-1" data-autofocus>
    <h2>There is a problem</h2>
    <ul>${messages.map((message) => html`<li>${message}</li>`)}</ul>
  </div>`;
}
