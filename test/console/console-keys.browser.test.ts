/**
 * The console in a real headless Chromium, the way a person uses it: sign in, create a key, copy
 * the secret from the page, call the API with it (also with the panel's shell lines, as printed),
 * watch the page record the use, revoke it, and see the API refuse it; a scoped key refused on
 * another operation; the whole path by keyboard only;
 * axe-core on every console page; screenshots at 1280 and 375 px in docs/screenshots/.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { horizontalOverflow, launchChromium, screenshotWidths, skipWithoutChromium } from "./support/console-browser.js";
import { startConsoleService, type ConsoleService } from "./support/console-service.js";

const ADMIN = { email: "ada@example.com", password: "analytical engine 1843" };
const MEMBER = { email: "grace@example.com", password: "compilers all the way" };
const KEY_SHAPE = /^atl_[a-z2-7]{12}_[A-Za-z0-9_-]{43}$/;

const skip = skipWithoutChromium("console-keys.browser");

describe.skipIf(skip)("console in a real browser", () => {
  let atelier: ConsoleService;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  /** Console errors (a CSP violation is one) seen by any page of the test. */
  const consoleErrors: string[] = [];

  async function newSignedInPage(account: { email: string; password: string }): Promise<{ context: BrowserContext; page: Page }> {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const tab = await ctx.newPage();
    tab.on("console", (message) => {
      if (message.type() === "error") consoleErrors.push(`${tab.url()}: ${message.text()}`);
    });
    await tab.goto(atelier.url);
    await tab.getByLabel("Email").fill(account.email);
    await tab.getByLabel("Password").fill(account.password);
    await tab.getByRole("button", { name: "Sign in" }).click();
    await tab.waitForURL(`${atelier.url}/keys`);
    return { context: ctx, page: tab };
  }

  function callApi(path: string, key: string, body: unknown): Promise<Response> {
    return fetch(`${atelier.url}/api/v1${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    });
  }

  async function createKey(tab: Page, name: string, scopeLabel?: RegExp): Promise<string> {
    await tab.goto(`${atelier.url}/keys`);
    await tab.getByText("Create key", { exact: true }).click();
    await tab.getByLabel("Name", { exact: true }).fill(name);
    if (scopeLabel) await tab.getByRole("checkbox", { name: scopeLabel }).check();
    await tab.getByRole("button", { name: "Create", exact: true }).click();
    const secret = await tab.getByLabel("Your new API key").inputValue();
    expect(secret).toMatch(KEY_SHAPE);
    return secret;
  }

  beforeAll(async () => {
    atelier = await startConsoleService();
    await atelier.createUser(ADMIN.email, ADMIN.password, "admin");
    await atelier.createUser(MEMBER.email, MEMBER.password, "member");
    await atelier.services.keys.create({ name: "made with the CLI" });
    browser = await launchChromium();
    ({ context, page } = await newSignedInPage(MEMBER));
  });

  afterAll(async () => {
    await browser?.close();
    await atelier?.close();
    // Every page the flows above opened, a CSP violation included, logged no error.
    expect(consoleErrors).toEqual([]);
  });

  it("signs in, creates a key, calls the API with the secret read from the page, sees the use, revokes it", async () => {
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor();
    expect(await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "API keys" }).getAttribute("aria-current")).toBe("page");

    const secret = await createKey(page, "website backend");
    expect(await page.getByText("It is shown only this once").isVisible()).toBe(true);
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: atelier.url });
    await page.getByRole("button", { name: "Copy" }).click();
    await page.getByText("Copied to the clipboard.").waitFor();
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(secret);
    await screenshotWidths(page, "console-key-created");

    // The panel's shell lines, pasted as printed, set the variables the examples and clients read and reach the API.
    const shell = (await page.locator("#new-key-shell").textContent())!;
    expect(shell).toContain(`export ATELIER_API_KEY=${secret}\nexport ATELIER_BASE_URL=${atelier.url}\n`);
    const { stdout } = await promisify(execFile)("bash", ["-c", `set -euo pipefail\ncurl() { command curl --fail-with-body "$@"; }\n${shell}`], { env: { PATH: process.env.PATH } });
    expect(JSON.parse(stdout)).toMatchObject({ object: "list", data: [] });

    const improved = await callApi("/prompt/improve", secret, { prompt: "a lighthouse at dusk" });
    expect(improved.status).toBe(200);
    expect(((await improved.json()) as { prompt: string }).prompt).toContain("lighthouse");

    await page.goto(`${atelier.url}/keys`);
    const row = page.getByRole("row", { name: /website backend/ });
    expect(await row.getByRole("cell").allInnerTexts()).toEqual(
      expect.arrayContaining([expect.stringMatching(/UTC\s+prompt\.improve/), "1 of 100", "active"]),
    );
    // The secret is never shown again, anywhere on the page.
    expect(await page.content()).not.toContain(secret.slice(17));
    await screenshotWidths(page, "console-keys");

    await row.getByRole("button", { name: /Revoke/ }).click();
    await page.getByRole("heading", { name: "Revoke “website backend”?" }).waitFor();
    await screenshotWidths(page, "console-revoke-confirm");
    await page.getByRole("button", { name: "Revoke key" }).click();
    await page.waitForURL(`${atelier.url}/keys`);
    expect(await page.getByRole("status").innerText()).toContain("Key “website backend” revoked.");
    expect(await page.getByRole("row", { name: /website backend/ }).getByText("revoked").isVisible()).toBe(true);

    const refused = await callApi("/prompt/improve", secret, { prompt: "again" });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { code: string }).code).toBe("UNAUTHORIZED");
  });

  it("gives a scoped key 403 KEY_SCOPE_DENIED on another operation, and 200 on its own", async () => {
    const secret = await createKey(page, "prompts only", /Prompt improvement/);
    const denied = await callApi("/tools/upscale", secret, { imageUrl: "https://example.com/cat.png", scale: 2 });
    expect(denied.status).toBe(403);
    const body = (await denied.json()) as { code: string; message: string };
    expect(body.code).toBe("KEY_SCOPE_DENIED");
    expect(body.message).toMatch(/may not call Upscale/);
    expect((await callApi("/prompt/improve", secret, { prompt: "a fox" })).status).toBe(200);
  });

  it("shows a member only their own keys, and an admin everyone's with owners and CLI keys", async () => {
    expect(await page.getByText("made with the CLI").count()).toBe(0);
    const admin = await newSignedInPage(ADMIN);
    try {
      const cliRow = admin.page.getByRole("row", { name: /made with the CLI/ });
      expect(await cliRow.getByText("CLI (operator)").isVisible()).toBe(true);
      expect(await admin.page.getByRole("row", { name: /prompts only/ }).getByText(MEMBER.email).isVisible()).toBe(true);
      // Newest first.
      expect(await admin.page.locator(".keys-table tbody th a").allInnerTexts()).toEqual(["prompts only", "website backend", "made with the CLI"]);
      await screenshotWidths(admin.page, "console-keys-admin");
    } finally {
      await admin.context.close();
    }
  });

  it("lets an invited person join through the one-time link, whose code never reaches the server", async () => {
    const admin = await newSignedInPage(ADMIN);
    const invitee = await browser.newContext();
    try {
      await admin.page.goto(`${atelier.url}/users`);
      await admin.page.getByLabel("Email", { exact: true }).first().fill("newcomer@example.com");
      await admin.page.getByRole("button", { name: "Create invite link" }).click();
      const link = await admin.page.getByLabel("Invite link").inputValue();
      expect(link).toMatch(new RegExp(`^${atelier.url}/invite#[A-Za-z0-9_-]{43}$`));
      await screenshotWidths(admin.page, "console-invite-created");

      const tab = await invitee.newPage();
      const requested: string[] = [];
      tab.on("request", (request) => requested.push(request.url()));
      await tab.goto(link);
      expect(await tab.getByLabel("Invite code").inputValue()).toBe(link.split("#")[1]);
      expect(tab.url()).toBe(`${atelier.url}/invite`); // the code left the address bar
      await tab.getByLabel("Display name").fill("Newcomer");
      await tab.getByLabel("Password", { exact: true }).fill("newcomer's passphrase");
      await tab.getByRole("button", { name: "Create account" }).click();
      await tab.waitForURL(`${atelier.url}/keys`);
      expect(await tab.getByRole("status").innerText()).toContain("Welcome to Atelier");
      expect(requested.every((url) => !url.includes(link.split("#")[1]!))).toBe(true);
      expect(atelier.logText()).not.toContain(link.split("#")[1]);

      // The link works once.
      const again = await invitee.newPage();
      await invitee.clearCookies();
      await again.goto(link);
      await again.getByLabel("Password", { exact: true }).fill("someone else's pass");
      await again.getByRole("button", { name: "Create account" }).click();
      expect(await again.getByRole("alert").innerText()).toContain("This invite code is not valid");
    } finally {
      await admin.context.close();
      await invitee.close();
    }
  });

  it("works end to end with the keyboard alone", async () => {
    const ctx = await browser.newContext({ viewport: { width: 375, height: 800 } });
    const tab = await ctx.newPage();
    const focusedName = () => tab.evaluate("(document.activeElement && (document.activeElement.labels?.[0]?.innerText || document.activeElement.innerText || '')).trim()") as Promise<string>;
    async function tabTo(name: RegExp): Promise<void> {
      for (let presses = 0; presses < 60; presses++) {
        await tab.keyboard.press("Tab");
        if (name.test(await focusedName())) return;
      }
      throw new Error(`Tab never reached ${name}`);
    }
    try {
      await tab.goto(`${atelier.url}/sign-in`);
      await tab.keyboard.press("Tab");
      expect(await focusedName()).toBe("Skip to main content");
      await tabTo(/^Email/);
      await tab.keyboard.type(MEMBER.email);
      await tabTo(/^Password/);
      await tab.keyboard.type(MEMBER.password);
      await tab.keyboard.press("Enter");
      await tab.waitForURL(`${atelier.url}/keys`);
      // Create key opens the form, whose first field is next.
      await tabTo(/^Create key$/);
      await tab.keyboard.press("Enter");
      await tabTo(/^Name/);
      await tab.keyboard.type("typed by keyboard");
      await tabTo(/^Create$/);
      await tab.keyboard.press("Enter");
      await tab.getByLabel("Your new API key").waitFor();
      // Focus lands on the new key's panel, so the next Tab reaches the secret and its Copy button.
      await tabTo(/^Copy$/);
      expect(await horizontalOverflow(tab)).toBe(0);
    } finally {
      await ctx.close();
    }
  });

  it("creates a key once: reloading its page, Back and Forward show no secret again and create nothing", async () => {
    const count = async () => (await atelier.services.keys.list()).filter((key) => key.name === "reloaded").length;
    const secret = await createKey(page, "reloaded");
    expect(page.url()).toMatch(new RegExp(`^${atelier.url}/keys/[^/]+/created$`));
    expect(page.url()).not.toContain(secret.slice(17));
    await page.reload();
    await page.getByRole("heading", { name: "The key’s secret is no longer shown" }).waitFor();
    expect(await page.content()).not.toContain(secret.slice(17));
    // The page points to another key: its form is open.
    expect(await page.getByLabel("Name", { exact: true }).isVisible()).toBe(true);
    await page.goBack();
    await page.goForward();
    await page.getByRole("heading", { name: "The key’s secret is no longer shown" }).waitFor();
    expect(await page.content()).not.toContain(secret.slice(17));
    expect(await count()).toBe(1);
  });
});
