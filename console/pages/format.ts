/** How the console writes times and counts: UTC, to the minute, machine-readable in `<time>`. */
import { html, type Html } from "../server/html.js";

export function time(date: Date | null, never = "Never"): Html {
  if (date === null) return html`${never}`;
  const text = date.toISOString().slice(0, 16).replace("T", " ");
  return html`<time datetime="${date.toISOString()}">${text} UTC</time>`;
}

export function count(value: number): string {
  return value.toLocaleString("en-US");
}
