/**
 * HTML from TypeScript without a template engine: `html` is a tagged template that escapes every
 * interpolated value unless it is already {@link Html} (built by `html` itself, or `raw` for
 * trusted constant markup). Pages therefore cannot inject text as markup by accident.
 */
const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ESCAPES[character]!);
}

/** Markup that is safe to send: escaped text and trusted structure. */
export class Html {
  constructor(readonly markup: string) {}
  toString(): string {
    return this.markup;
  }
}

/** What may appear inside `${...}`: text (escaped), numbers, markup, lists of them; nullish and false render nothing. */
export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false || value === true) return "";
  if (value instanceof Html) return value.markup;
  if (Array.isArray(value)) return value.map(render).join("");
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let markup = strings[0]!;
  for (let index = 0; index < values.length; index++) markup += render(values[index]!) + strings[index + 1]!;
  return new Html(markup);
}

/** Trusted markup, taken as is. Never pass it anything a user or a request supplied. */
export function raw(markup: string): Html {
  return new Html(markup);
}
