/**
 * Every console page (the console tour: sign-in and invite signed out, the rest as an admin, the
 * member's keys) in a real Chromium, in the light and the dark scheme (`prefers-color-scheme`): axe-core finds
 * no serious or critical violation, colour contrast included, and nothing overflows sideways at 1280
 * or 375 px (nor does a table overflow its frame at 1280 px). On a phone the header folds behind a Menu button that opens it.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeViolations, watchProblems } from "./signed-in-browser.js";
import { horizontalOverflow, launchChromium, seriousAxeViolations, tableOverflow } from "./support/console-browser.js";
import { tourConsole } from "./support/console-tour.js";

let browser: Browser;

/**
 * Sideways overflow once the page has laid itself out at a new width: charts resize their canvases
 * a moment after the window does, so a width is given a few seconds to settle before it counts.
 */
async function settledOverflow(page: Page): Promise<number> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const overflow = await horizontalOverflow(page);
    if (overflow === 0 || Date.now() > deadline) return overflow;
    await page.waitForTimeout(100);
  }
}
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

describe("every console page", () => {
  it("passes axe in both colour schemes and fits 1280 and 375 px; on a phone the header folds behind Menu", async () => {
    const findings: string[] = [];
    const visited: string[] = [];
    const watched = new WeakSet<object>();
    await tourConsole(browser, async (page, name) => {
      if (!watched.has(page)) {
        watched.add(page);
        watchProblems(page, findings);
      }
      visited.push(name);
      for (const scheme of ["light", "dark"] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        for (const violation of describeViolations(await seriousAxeViolations(page))) findings.push(`${name} (${scheme}): ${violation}`);
      }
      await page.emulateMedia({ colorScheme: "light" });
      for (const width of [1280, 375]) {
        await page.setViewportSize({ width, height: 900 });
        const overflow = await settledOverflow(page);
        if (overflow > 0) findings.push(`${name}: ${overflow} px wider than the window at ${width} px`);
        if (width === 1280 && (await tableOverflow(page)) > 0) findings.push(`${name}: a table wider than the page at 1280 px`);
      }
      const toggle = page.getByRole("button", { name: "Menu" });
      if ((await toggle.count()) > 0) {
        const nav = page.getByRole("navigation", { name: "Console" });
        if (await nav.isVisible()) findings.push(`${name}: the navigation shows at 375 px before Menu is pressed`);
        await toggle.click();
        if (!(await nav.isVisible())) findings.push(`${name}: Menu does not open the navigation`);
        await toggle.click();
      }
      await page.setViewportSize({ width: 1280, height: 900 });
    });
    expect(visited).toEqual(expect.arrayContaining(["first-admin", "sign-in", "keys-admin", "key-created", "models", "playground-upscale", "api-reference", "keys"]));
    expect(findings).toEqual([]);
  }, 600_000);
});
