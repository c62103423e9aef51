/**
 * The frame of every console page: skip link, header with the navigation, the signed-in user and a
 * sign-out form (folded behind a Menu button on phones by console.js), the page's `<h1>` and content, and the one-time notice. Only same-origin assets
 * are referenced (the CSP allows nothing else).
 */
import type { User } from "../../server/accounts/account-store.js";
import { assetUrl } from "../server/assets.js";
import { csrfField } from "../server/csrf.js";
import { html, type Html } from "../server/html.js";

export interface NavEntry {
  label: string;
  /** Position in the navigation: API keys 10, Usage 20, Jobs 25, Playground 30, Models 40, API reference 50, Users 60, Account 70. */
  order: number;
}

/** A navigation link as the layout renders it. */
export interface NavLink extends NavEntry {
  path: string;
  adminOnly: boolean;
}

export interface LayoutInput {
  title: string;
  main: Html;
  user: User | null;
  csrfToken: string | null;
  notice: string | null;
  navigation: NavLink[];
  /** The registered path of the page, to mark its link `aria-current="page"`. */
  currentPath: string;
  scripts: string[];
  styles: string[];
}

function navigationMarkup(input: LayoutInput): Html {
  if (!input.user) return html``;
  const links = input.navigation.filter((link) => !link.adminOnly || input.user!.role === "admin");
  return html`<nav class="site-nav" aria-label="Console">
    <ul>${links.map(
      (link) =>
        html`<li><a href="${link.path}"${link.path === input.currentPath || input.currentPath.startsWith(`${link.path}/`) ? html` aria-current="page"` : html``}>${link.label}</a></li>`,
    )}</ul>
  </nav>`;
}

function accountMarkup(input: LayoutInput): Html {
  if (!input.user) return html``;
  return html`<div class="site-account">
    <a href="/account" class="site-user"><span class="visually-hidden">Signed in as </span>${input.user.displayName}</a>
    ${input.user.role === "admin" ? html`<span class="badge">admin</span>` : html``}
    <form method="post" action="/sign-out" class="inline-form">${csrfField(input.csrfToken)}<button type="submit" class="button button-quiet">Sign out</button></form>
  </div>`;
}

export function layout(input: LayoutInput): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${input.title} · Atelier</title>
${input.csrfToken ? html`<meta name="csrf-token" content="${input.csrfToken}">` : html``}
<link rel="icon" href="${assetUrl("favicon.svg")}" type="image/svg+xml">
<link rel="stylesheet" href="${assetUrl("console.css")}">
${input.styles.map((name) => html`<link rel="stylesheet" href="${assetUrl(name)}">`)}
<script src="${assetUrl("console.js")}" defer></script>
${input.scripts.map((name) => html`<script src="${assetUrl(name)}" defer></script>`)}
</head>
<body>
<a class="skip-link" href="#main">Skip to main content</a>
<header class="site-header">
  <a class="site-brand" href="/">Atelier</a>
  ${input.user ? html`<button type="button" class="button button-quiet menu-toggle" aria-controls="site-menu" aria-expanded="false" hidden>Menu</button>
  <div class="site-menu" id="site-menu">
  ${navigationMarkup(input)}
  ${accountMarkup(input)}
  </div>` : html``}
</header>
<main id="main" tabindex="-1">
  <h1>${input.title}</h1>
  ${input.notice ? html`<div class="notice" role="status">${input.notice}</div>` : html``}
  ${input.main}
</main>
<footer class="site-footer"><p>Atelier: self-hosted image AI. The API lives under <code>/api/v1</code>: see the <a href="/reference">API reference</a>.</p></footer>
</body>
</html>`;
}
