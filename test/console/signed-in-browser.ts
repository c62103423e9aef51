/**
 * Signing in through the real form in a fresh browser context, with every CSP violation and page
 * error collected, for the Usage, Playground, Models and API reference tests (the browser itself,
 * axe and screenshots come from support/console-browser.ts); and a whole console for a test file:
 * the service, its people and a browser to sign them in with.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import type { User } from "../../server/accounts/account-store.js";
import { startTestService, type TestService } from "../support/test-service.js";
import { launchChromium, type AxeViolation } from "./support/console-browser.js";

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

/** Everyone's password in these tests. */
export const PASSWORD = "correct horse battery staple";

/** The people a console test can start with: two members and an admin. */
export const PEOPLE = {
  alice: { email: "alice@example.com", displayName: "Alice", role: "member" },
  bob: { email: "bob@example.com", displayName: "Bob", role: "member" },
  admin: { email: "admin@example.com", displayName: "Ada Admin", role: "admin" },
} as const;

export type Person = keyof typeof PEOPLE;

export interface BrowserConsole<Name extends Person> {
  service: TestService;
  browser: Browser;
  /** The accounts made, by name. */
  users: Record<Name, User>;
  /** Signs `name` in through the form in a fresh context. */
  signIn(name: Name, width?: number): Promise<SignedInPage>;
  /** Closes the browser, then the service. */
  close(): Promise<void>;
}

/** A test service (`env` on top of the test defaults) with accounts for `people`, and Chromium. */
export async function startBrowserConsole<Name extends Person>(env: Record<string, string>, people: readonly Name[]): Promise<BrowserConsole<Name>> {
  const service = await startTestService(env);
  try {
    const users = {} as Record<Name, User>;
    for (const name of people) users[name] = await service.services.accounts.createUser({ ...PEOPLE[name], password: PASSWORD });
    const browser = await launchChromium();
    return {
      service,
      browser,
      users,
      signIn: (name, width) => signIn(browser, service.url, PEOPLE[name].email, PASSWORD, width),
      close: async () => {
        await browser.close();
        await service.close();
      },
    };
  } catch (error) {
    await service.close();
    throw error;
  }
}

/** Violations as one line each, so a failing assertion says what and where. */
export function describeViolations(violations: AxeViolation[]): string[] {
  return violations.map((violation) => `${violation.impact} ${violation.id}: ${violation.help} at ${violation.nodes.slice(0, 5).join(" ")}`);
}
