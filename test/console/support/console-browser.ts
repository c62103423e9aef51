/**
 * A real headless Chromium for console tests: Debian's `chromium` package driven by playwright-core
 * (`executablePath`; Playwright never downloads a browser). Without the binary a suite is skipped
 * with a notice; with `CI` set it fails instead (`.ci/run` installs the package).
 */
import fs from "node:fs";
import os from "node:os";
import { createRequire } from "node:module";
import path from "node:path";
import { chromium, type Browser, type Locator, type Page } from "playwright-core";

export const CHROMIUM_PATH = process.env.ATELIER_CHROMIUM ?? "/usr/bin/chromium";

/** True when the calling suite should be skipped: no Chromium and `CI` unset. */
export function skipWithoutChromium(suite: string): boolean {
  if (fs.existsSync(CHROMIUM_PATH) || process.env.CI) return false;
  console.warn(`[${suite}] SKIPPED: no Chromium at ${CHROMIUM_PATH}. Install it with: apt-get install chromium (with CI set this suite fails instead).`);
  return true;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    // Root (as in CI) cannot use Chromium's user-namespace sandbox.
    args: process.getuid?.() === 0 ? ["--no-sandbox"] : [],
  });
}

const require = createRequire(import.meta.url);
const axeSource = fs.readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/**
 * Runs axe-core (WCAG 2.0/2.1 A and AA rules) on the page and returns the serious and critical
 * violations. The engine is evaluated through the DevTools protocol, which the page's CSP does not
 * govern, so the page's own policy stays exactly as served.
 */
export async function seriousAxeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  // A string, not a function: the project compiles without DOM types, and this runs in the page.
  const violations = (await page.evaluate(`(async () => {
    const result = await axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] } });
    if (result.passes.length === 0) throw new Error("axe-core checked nothing on this page");
    return result.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      nodes: violation.nodes.map((node) => JSON.stringify(node.target)),
    }));
  })()`)) as AxeViolation[];
  return violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical");
}

/**
 * Where the tests' screenshots go: a temporary folder, so test runs leave the working tree clean
 * (every run differs in its timestamps and ports). The pictures in docs/screenshots come from
 * scripts/console-screenshots.ts.
 */
export const SCREENSHOT_DIR = path.join(os.tmpdir(), "atelier-console-screenshots");

/** Saves full-page screenshots of the current page at 1280 and 375 px wide: `<name>-1280.png`, `<name>-375.png`. */
export async function screenshotWidths(page: Page, name: string): Promise<string[]> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const original = page.viewportSize() ?? { width: 1280, height: 900 };
  const files: string[] = [];
  for (const width of [1280, 375]) {
    await page.setViewportSize({ width, height: 900 });
    const file = path.join(SCREENSHOT_DIR, `${name}-${width}.png`);
    await page.screenshot({ path: file, fullPage: true });
    files.push(file);
  }
  await page.setViewportSize(original);
  return files;
}

/** Horizontal overflow in CSS pixels at the current width (0: nothing needs sideways scrolling). */
export function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") as Promise<number>;
}

/** The most any table on the page overflows its scrolling wrapper, in CSS pixels (0: every table fits). */
export function tableOverflow(page: Page): Promise<number> {
  return page.evaluate("Math.max(0, ...[...document.querySelectorAll('.table-wrap')].map((wrap) => wrap.scrollWidth - wrap.clientWidth))") as Promise<number>;
}

/** The loaded image's natural size: waits for it to load, and fails if it does not decode. */
export function naturalSize(image: Locator): Promise<[number, number]> {
  return image.evaluate(
    (element: unknown) =>
      new Promise<[number, number]>((resolve, reject) => {
        const img = element as { complete: boolean; naturalWidth: number; naturalHeight: number; addEventListener(type: string, listener: () => void): void };
        const done = () => (img.naturalWidth > 0 ? resolve([img.naturalWidth, img.naturalHeight]) : reject(new Error("the image did not decode")));
        if (img.complete) done();
        else {
          img.addEventListener("load", done);
          img.addEventListener("error", done);
        }
      }),
  );
}
