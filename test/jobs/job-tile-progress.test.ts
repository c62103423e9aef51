/**
 * Tile progress over the upscale worker's streaming RPC: a real network model (espcn-x3 from the
 * mirror, fixed 224 px tiles) upscaling an image of several tiles as a job reports every tile in
 * order over SSE, and its result is the synchronous one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installModels } from "../support/installed-models.js";
import { fileTempDir } from "../support/temp-dir.js";
import { hasMirrorModel } from "../support/test-assets.js";
import { dataUrl, gradientPng } from "../support/test-images.js";
import { startTestService, type TestService } from "../support/test-service.js";
import { call, finishedJob, submitAsync } from "./job-helpers.js";

const modelsFolder = fileTempDir("test-models");

describe.skipIf(!hasMirrorModel("superres-espcn-x3"))("upscale jobs report tiles (espcn-x3)", () => {
  let service: TestService;
  let key: string;

  beforeAll(async () => {
    service = await startTestService({ ATELIER_MODELS_DIR: await installModels(modelsFolder, ["espcn-x3"]) });
    key = await service.createKey("tiles");
  }, 120_000);
  afterAll(async () => {
    await service?.close();
  });

  it("streams one progress event per tile, in order, and ends with the synchronous result", async () => {
    const body = { imageUrl: dataUrl(await gradientPng(420, 300)), scale: 3, model: "espcn-x3" };
    const job = await submitAsync(service, "/tools/upscale", body, key);
    const text = await (await call(service, "GET", `/jobs/${job.id}/events`, key)).text();
    const events = text
      .split("\n\n")
      .filter((block) => block.includes("data: "))
      .map((block) => ({
        event: /^event: (.*)$/m.exec(block)![1]!,
        data: JSON.parse(/^data: (.*)$/m.exec(block)![1]!) as { step?: number; steps?: number; stage?: string; fraction?: number },
      }));
    const progress = events.filter((event) => event.event === "progress").map((event) => event.data);
    expect(progress.length).toBeGreaterThanOrEqual(4);
    const total = progress[0]!.steps!;
    expect(progress.map((p) => p.step)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    expect(progress.every((p) => p.stage === "tiles" && p.steps === total)).toBe(true);
    expect(progress.at(-1)!.fraction).toBe(1);
    expect(events.at(-1)!.event).toBe("result");

    const done = await finishedJob(service, key, job.id);
    const sync = (await (await service.post("/tools/upscale", body, key)).json()) as { data: { url: string }[]; steps: string[] };
    const result = done.result as unknown as typeof sync;
    expect(result.steps).toEqual(sync.steps);
    expect(result.data[0]!.url).toBe(sync.data[0]!.url);
  });
});
