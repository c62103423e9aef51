/**
 * Screenshots of every console page at 1280 and 375 px wide, in the light and the dark scheme, as
 * PNG in docs/screenshots/: `console-<page>-<width>.png` (light) and `console-<page>-<width>-dark.png`.
 * The pages and their content come from the console tour (test/console/support/console-tour.ts);
 * each shot is reduced to a 256-colour palette so the committed files stay small.
 *
 *   npx tsx scripts/console-screenshots.ts
 *
 * Needs Chromium at /usr/bin/chromium (or ATELIER_CHROMIUM) and the model mirror (ATELIER_MODEL_MIRROR).
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import sharp from "sharp";
import { launchChromium } from "../test/console/support/console-browser.js";
import { tourConsole } from "../test/console/support/console-tour.js";

const OUT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "docs", "screenshots");
const WIDTHS = [1280, 375] as const;
const SCHEMES = ["light", "dark"] as const;

fs.mkdirSync(OUT, { recursive: true });
const browser = await launchChromium();
let count = 0;
try {
  await tourConsole(browser, async (page, name) => {
    const viewport = page.viewportSize() ?? { width: 1280, height: 900 };
    for (const scheme of SCHEMES) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: 900 });
        const shot = await page.screenshot({ fullPage: true });
        const file = path.join(OUT, `console-${name}-${width}${scheme === "dark" ? "-dark" : ""}.png`);
        await sharp(shot).png({ palette: true, colours: 256, compressionLevel: 9, effort: 10 }).toFile(file);
        count++;
      }
    }
    await page.emulateMedia({ colorScheme: "light" });
    await page.setViewportSize(viewport);
    console.log(`${name}`);
  });
} finally {
  await browser.close();
}
console.log(`${count} screenshots in ${path.relative(process.cwd(), OUT)}`);
process.exit(0);
