/**
 * Signing in through the real form in a fresh browser context, with every CSP violation and page
 * error collected, for the Usage, Playground, Models and API reference tests (the browser itself,
 * axe and screenshots come from support/console-browser.ts).
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import type { AxeViolation } from "./support/console-browser.js";

export const WIDTHS = { desktop: 1280, phone: 375 } as const;

export interface SignedInPage {
  context: BrowserContext;
  page: Page;
  /** CSP violations and page errors seen so far. */
  problems: string[];
}

/** Collects CSP refusals and uncaught errors of `page` into `problems`. */
export function watchProblems(page: Page, problems: string[]): void {
  page.on("console", (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) problems.push(message.text());
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
}

export async function signIn(browser: Browser, baseUrl: string, email: string, password: string, width: number = WIDTHS.desktop): Promise<SignedInPage> {
  const context = await browser.newContext({ baseURL: baseUrl, viewport: { width, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  const problems: string[] = [];
  watchProblems(page, problems);
  await page.goto("/sign-in");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => !url.pathname.startsWith("/sign-in"));
  return { context, page, problems };
}

/** Violations as one line each, so a failing assertion says what and where. */
export function describeViolations(violations: AxeViolation[]): string[] {
  return violations.map((violation) => `${violation.impact} ${violation.id}: ${violation.help} at ${violation.nodes.slice(0, 5).join(" ")}`);
}
