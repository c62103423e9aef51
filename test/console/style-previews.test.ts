/**
 * The playground's style thumbnails over real HTTP with the real worker: each is rendered once, at
 * the reference photo's small size, into the data folder under a name keyed by the style's weights
 * and the photo, so a restart serves it without rendering; renders run one at a time as background
 * work, so a style transfer someone asks for meanwhile is not queued behind them.
 */
import fs from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installModels } from "../support/installed-models.js";
import { fileTempDir } from "../support/temp-dir.js";
import { dataUrl, gradientPng } from "../support/test-images.js";
import { signInHttp, startConsoleService, type ConsoleService, type HttpSession } from "./support/console-service.js";

const STYLES = ["mathura", "matta"];
const USER = { email: "previews@example.com", password: "previews password 123" };
const PREVIEW_NAME = /^([a-z-]+)-[0-9a-f]{16}\.jpg$/;
const empty = fileTempDir("no-models");
const modelsDir = fileTempDir("test-models");
// The restarted service's data folder: two services use it, so neither removes it.
const restartedDataDir = fileTempDir("test");
const running: ConsoleService[] = [];

beforeAll(async () => {
  await installModels(modelsDir, STYLES);
}, 240_000);
afterAll(async () => {
  for (const service of running) await service.close();
});

async function start(env: Record<string, string>): Promise<{ service: ConsoleService; session: HttpSession }> {
  const service = await startConsoleService(env);
  running.push(service);
  if (!(await service.services.accounts.listUsers()).some((user) => user.email === USER.email)) await service.createUser(USER.email, USER.password);
  return { service, session: await signInHttp(service.url, USER.email, USER.password) };
}

const preview = (service: ConsoleService, session: HttpSession, style: string) => fetch(`${service.url}/playground/styles/${style}.jpg`, { headers: { cookie: session.cookie } });

/** The sizes the worker painted, in the order it finished them (its "style applied" log lines). */
function paintedSizes(service: ConsoleService): string[] {
  return service
    .logText()
    .split("\n")
    .filter((line) => line.includes('"msg":"style applied"'))
    .map((line) => (JSON.parse(line) as { size: string }).size);
}

describe("style previews", () => {
  it("are rendered once, small, into the data folder keyed by weights and photo; a restart serves them without rendering", { timeout: 120_000 }, async () => {
    const first = await start({ ATELIER_DATA_DIR: restartedDataDir, ATELIER_MODELS_DIR: modelsDir });
    const answer = await preview(first.service, first.session, "mathura");
    expect(answer.status).toBe(200);
    const bytes = Buffer.from(await answer.arrayBuffer());
    await expect(sharp(bytes).metadata()).resolves.toMatchObject({ format: "jpeg", width: 192, height: 144 });
    expect(paintedSizes(first.service)).toEqual(["192x144"]);
    const files = fs.readdirSync(path.join(first.service.dataDir, "style-previews"));
    expect(files).toEqual([expect.stringMatching(PREVIEW_NAME)]);
    expect(files[0]!.startsWith("mathura-")).toBe(true);
    // Asked again: the file, not the worker.
    expect((await preview(first.service, first.session, "mathura")).status).toBe(200);
    expect(paintedSizes(first.service)).toEqual(["192x144"]);

    // Restarted on the same data folder with no style installed: a render would fail, the kept preview is served.
    const second = await start({ ATELIER_DATA_DIR: first.service.dataDir, ATELIER_MODELS_DIR: empty });
    const again = await preview(second.service, second.session, "mathura");
    expect(again.status).toBe(200);
    expect(Buffer.from(await again.arrayBuffer()).equals(bytes)).toBe(true);
    expect(paintedSizes(second.service)).toEqual([]);
    // A style never rendered has none to give there.
    expect((await preview(second.service, second.session, "matta")).status).toBe(404);
  });

  it("render one at a time, behind a style transfer asked for meanwhile", { timeout: 120_000 }, async () => {
    const { service, session } = await start({ ATELIER_MODELS_DIR: modelsDir, ATELIER_WORKER_CONCURRENCY: "1" });
    const { key } = await service.services.keys.create({ name: "real call" });
    const previews = STYLES.map((style) => preview(service, session, style));
    // Let the page's thumbnail requests reach the service first.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const call = await fetch(`${service.url}/api/v1/tools/style-transfer`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ imageUrl: dataUrl(await gradientPng(320, 240)), style: "matta" }),
    });
    expect(call.status).toBe(200);
    for (const answer of await Promise.all(previews)) expect(answer.status).toBe(200);
    const painted = paintedSizes(service);
    expect(painted.filter((size) => size === "192x144")).toHaveLength(STYLES.length);
    // Only the preview already running when the call came finished before it; the others waited behind it.
    expect(painted.indexOf("320x240")).toBeLessThanOrEqual(1);
  });
});
