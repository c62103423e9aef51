/**
 * A user's allowance in a real headless Chromium, the way a person meets it: a member with an
 * allowance of 5 makes keys in the API keys area, spends the allowance across two of them through
 * the API (the sixth request is a 429 naming it), sees this hour's use and their active keys against
 * the cap, is refused a key beyond the cap with the reason on the page; an admin sees both figures
 * for every user on the Users page, and that their own keys have no shared allowance.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { horizontalOverflow, launchChromium, screenshotWidths, seriousAxeViolations } from "./support/console-browser.js";
import { startConsoleService, type ConsoleService } from "./support/console-service.js";
import { signIn, WIDTHS } from "./signed-in-browser.js";

const ADMIN = { email: "ada@example.com", password: "analytical engine 1843" };
const MEMBER = { email: "grace@example.com", password: "compilers all the way" };

describe("a user's allowance and key cap in the console", () => {
  let atelier: ConsoleService;
  let browser: Browser;

  beforeAll(async () => {
    atelier = await startConsoleService({ ATELIER_MAX_KEYS_PER_USER: "3" });
    await atelier.createUser(ADMIN.email, ADMIN.password, "admin");
    const member = await atelier.createUser(MEMBER.email, MEMBER.password, "member");
    await atelier.services.accounts.setKeyAllowance(member.id, 5);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await atelier?.close();
  });

  const improve = (key: string) =>
    fetch(`${atelier.url}/api/v1/prompt/improve`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ prompt: "a lighthouse at dusk" }),
    });

  async function createKey(page: Page, name: string): Promise<void> {
    await page.goto("/keys");
    await page.getByText("Create key", { exact: true }).click();
    await page.getByLabel("Name", { exact: true }).fill(name);
    await page.getByRole("button", { name: "Create", exact: true }).click();
  }

  /** The text of the definition after `term` in the allowance panel. */
  const figure = (page: Page, term: string) => page.getByRole("region", { name: "Your allowance" }).locator(`dt:text-is("${term}") + dd`).innerText();

  it("shows a member their allowance shared by their keys and their keys against the cap, and refuses a key beyond it", async () => {
    const { context, page, problems } = await signIn(browser, atelier.url, MEMBER.email, MEMBER.password);
    try {
      expect(await figure(page, "Requests this hour")).toBe("0 of 5 requests, shared by all your keys");
      expect(await figure(page, "Active keys")).toBe("0 of 3");

      const secrets: string[] = [];
      for (const name of ["website", "mobile app"]) {
        await createKey(page, name);
        secrets.push(await page.getByLabel("Your new API key").inputValue());
      }
      const statuses: number[] = [];
      for (const secret of [secrets[0]!, secrets[0]!, secrets[0]!, secrets[1]!, secrets[1]!]) statuses.push((await improve(secret)).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200]);
      // The second key has used only two of its own five, but the allowance they share is spent.
      const refused = await improve(secrets[1]!);
      expect(refused.status).toBe(429);
      expect(refused.headers.get("ratelimit-policy")).toBe('"user-hourly";q=5;w=3600');
      expect(((await refused.json()) as { message: string }).message).toMatch(/^Rate limit exceeded: this key's owner has an allowance of 5 requests per hour, shared by all their keys\. Retry after \d+ s\.$/);

      await page.goto("/keys");
      expect(await figure(page, "Requests this hour")).toMatch(/^5 of 5 requests, shared by all your keys; starts afresh in (59|60) min$/);
      expect(await figure(page, "Active keys")).toBe("2 of 3");
      expect(await page.getByRole("row", { name: /website/ }).getByRole("cell").allInnerTexts()).toContain("3 of 5");
      expect(await page.getByRole("row", { name: /mobile app/ }).getByRole("cell").allInnerTexts()).toContain("2 of 5");

      await createKey(page, "third");
      await page.getByLabel("Your new API key").waitFor();
      expect(await figure(page, "Active keys")).toBe("3 of 3 (revoke one to create another)");
      await createKey(page, "fourth");
      expect(await page.getByRole("alert").innerText()).toContain("You have 3 active keys, the most one user may have. Revoke a key you no longer use to create another.");
      expect(await page.getByLabel("Your new API key").count()).toBe(0);
      expect((await atelier.services.keys.list()).map((key) => key.name)).not.toContain("fourth");
      await screenshotWidths(page, "console-keys-allowance");
      expect(await seriousAxeViolations(page)).toEqual([]);
      await page.setViewportSize({ width: WIDTHS.phone, height: 800 });
      expect(await horizontalOverflow(page)).toBe(0);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("shows an admin every user's allowance use and active keys, and no shared allowance for their own keys", async () => {
    const { context, page, problems } = await signIn(browser, atelier.url, ADMIN.email, ADMIN.password);
    try {
      expect(await figure(page, "Requests this hour")).toBe("No shared allowance: each key’s own hourly limit applies.");
      await page.goto("/users");
      const cells = async (email: string) => page.getByRole("row", { name: new RegExp(email) }).getByRole("cell").allInnerTexts();
      expect(await cells(MEMBER.email)).toEqual(expect.arrayContaining(["5 of 5 requests", "3 of 3"]));
      expect(await cells(ADMIN.email)).toEqual(expect.arrayContaining(["no shared allowance (default)", "0 of 3"]));
      await screenshotWidths(page, "console-users-allowance");

      const member = (await atelier.services.accounts.findUserByEmail(MEMBER.email))!;
      await page.goto(`/users/${member.id}`);
      expect(await page.locator('dt:text-is("Allowance this hour") + dd').innerText()).toBe("5 of 5 requests");
      expect(await page.locator('dt:text-is("Active keys") + dd').innerText()).toBe("3 of 3");
      expect(await seriousAxeViolations(page)).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
