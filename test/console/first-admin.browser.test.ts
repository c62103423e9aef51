/**
 * The first hour of a fresh install, in a real `npm start` process and a real headless Chromium:
 * the start banner names the console's URL and prints a one-time setup link exactly once; the
 * sign-in page says where that link is; the link's page refuses a wrong code, then creates the
 * first administrator, signs them in and lands on the API keys page; afterwards the link answers
 * that setup is done. The token never appears in the process's logs or in its database.
 * Races, other routers and the CLI are first-admin-setup.test.ts.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { freeLoopbackPort } from "../support/free-port.js";
import { makeTempDir } from "../support/temp-dir.js";
import { watchProblems } from "./signed-in-browser.js";
import { horizontalOverflow, launchChromium, seriousAxeViolations } from "./support/console-browser.js";

const ADMIN = { email: "first@example.com", name: "First Admin", password: "the very first passphrase" };
const LINK_LINE = /^ {2}Setup: +no account exists yet: open (\S+) to create the first administrator$/m;

const dataDir = makeTempDir("test");
let child: ChildProcess | undefined;
let output = "";
let browser: Browser;

/** Resolves once `pattern` appears in the process's output (stdout and stderr); fails, showing the output, after `waitMs`. */
function outputMatching(pattern: RegExp, waitMs = 45_000): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${pattern} in the output of npm start:\n${output}`)), waitMs);
    const check = () => {
      const match = pattern.exec(output);
      if (match) {
        clearTimeout(timer);
        child!.stdout!.off("data", check);
        child!.stderr!.off("data", check);
        resolve(match);
      }
    };
    child!.stdout!.on("data", check);
    child!.stderr!.on("data", check);
    child!.once("exit", (code) => reject(new Error(`npm start exited with ${code}:\n${output}`)));
    check();
  });
}

beforeAll(async () => {
  // The router alone (no worker is needed for accounts), as `npm start` runs it, on a fresh data folder.
  const env = {
    ...process.env,
    HOST: "127.0.0.1",
    PORT: "0",
    LOG_LEVEL: "info",
    ATELIER_DATA_DIR: dataDir,
    ATELIER_METRICS_PORT: "0",
    ATELIER_PROVISION_MODELS: "false",
    ATELIER_WORKER_ADDRESS: `127.0.0.1:${await freeLoopbackPort()}`,
  };
  child = spawn(process.execPath, ["--import", "tsx", "bin/service.ts"], { env, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child!.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** Sideways overflow of the page at 375 px wide, the width of a small phone. */
async function overflowOnPhone(page: Page): Promise<number> {
  const original = page.viewportSize()!;
  await page.setViewportSize({ width: 375, height: 900 });
  const overflow = await horizontalOverflow(page);
  await page.setViewportSize(original);
  return overflow;
}

function occurrences(text: string, part: string): number {
  return text.split(part).length - 1;
}

describe("the first administrator of a fresh `npm start`, in a browser", () => {
  it("prints the console's URL and a setup link once; the link creates the administrator, signs them in on the keys page, then is done", async () => {
    const [, url] = await outputMatching(/^Atelier is listening on (\S+) /m);
    // The banner is one write: its setup line follows at once.
    const [, link] = await outputMatching(LINK_LINE, 5_000);
    expect(output).toContain(`\n  Console:   ${url}/\n`);
    const setupUrl = new URL(link!);
    expect(setupUrl.origin).toBe(url);
    expect(setupUrl.pathname).toBe("/setup");
    const token = setupUrl.hash.slice(1);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(occurrences(output, token)).toBe(1);

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    watchProblems(page, problems);

    // The sign-in page of a fresh install says where the link is.
    await page.goto(`${url}/`);
    await page.waitForURL(`${url}/sign-in`);
    await page.getByText("No account exists yet. To create the first administrator, open the setup link printed in the terminal where npm start runs").waitFor();
    expect(await page.getByText("Ask an administrator").count()).toBe(0);
    expect(await overflowOnPhone(page)).toBe(0);

    // A made-up code is refused, and nothing is created.
    await page.goto(`${url}/setup#not-the-code`);
    expect(await page.getByLabel("Setup code").inputValue()).toBe("not-the-code");
    await page.getByLabel("Email").fill("mallory@example.com");
    await page.getByLabel("Password").fill(ADMIN.password);
    await page.getByRole("button", { name: "Create administrator" }).click();
    await page.getByText("This setup code is not right.").first().waitFor();

    // The printed link: its code fills the form (and leaves the address bar). From another page,
    // since going from /setup to /setup#code would only move to the fragment.
    await page.goto(`${url}/sign-in`);
    await page.goto(link!);
    await page.getByRole("heading", { level: 1, name: "Create the first administrator" }).waitFor();
    expect(await page.getByLabel("Setup code").inputValue()).toBe(token);
    expect(page.url()).toBe(`${url}/setup`);
    expect(await seriousAxeViolations(page)).toEqual([]);
    expect(await overflowOnPhone(page)).toBe(0);
    await page.getByLabel("Email").fill(ADMIN.email);
    await page.getByLabel("Display name").fill(ADMIN.name);
    await page.getByLabel("Password").fill(ADMIN.password);
    await page.getByRole("button", { name: "Create administrator" }).click();

    await page.waitForURL(`${url}/keys`);
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor();
    await page.getByText("Welcome to Atelier: you are its administrator.").waitFor();
    expect(await page.locator(".site-account").innerText()).toContain(ADMIN.name);
    expect(await page.locator(".site-account .badge").innerText()).toBe("admin");
    expect(await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Users" }).count()).toBe(1);

    // Someone else with the same link, afterwards: setup is done, sign in instead.
    const late = await browser.newContext();
    const latePage = await late.newPage();
    const answer = await latePage.goto(link!);
    expect(answer?.status()).toBe(410);
    await latePage.getByRole("heading", { level: 1, name: "Setup is done" }).waitFor();
    await latePage.getByRole("link", { name: "Sign in" }).click();
    await latePage.waitForURL(`${url}/sign-in`);
    await latePage.getByText("Ask an administrator for an invite.").waitFor();
    await late.close();
    await context.close();

    expect(problems).toEqual([]);
    // The banner line is the only place the token ever went: not the logs, not the database.
    expect(output).toContain("console first administrator created");
    expect(occurrences(output, token)).toBe(1);
    for (const file of fs.readdirSync(dataDir).filter((name) => name.startsWith("atelier.db"))) {
      expect(fs.readFileSync(path.join(dataDir, file)).includes(token), file).toBe(false);
    }
  });
});
