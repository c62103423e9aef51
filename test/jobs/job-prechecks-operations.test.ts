/**
 * Style transfer, background removal and generation refuse work that cannot succeed before a job
 * exists, over real HTTP, as upscaling does (job-prechecks.test.ts): options the model does not take,
 * unknown styles and models, a described scene with no photographic generator, an image that is not
 * one and a result over the output pixel limit answer a job submission with the synchronous call's
 * status and body, and no job is made. A request that can succeed is still accepted as a job.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installModels } from "../support/installed-models.js";
import { fileTempDir } from "../support/temp-dir.js";
import { startTestService, type TestService } from "../support/test-service.js";
import { dataUrl, gradientPng } from "../support/test-images.js";
import { call, finishedJob, type JobBody } from "./job-helpers.js";

const modelsFolder = fileTempDir("test-models");

let service: TestService;
let small: string;
/** 1100x1000: 1.1 MP, over the 1 MP output limit of this service for a result of the source's size. */
let overLimit: string;
const notAnImage = `data:image/png;base64,${Buffer.from("not an image at all").toString("base64")}`;

beforeAll(async () => {
  const modelsDir = await installModels(modelsFolder, ["cvae-quickdraw", "portrait-selfie", "mathura"]);
  service = await startTestService({ ATELIER_MODELS_DIR: modelsDir, ATELIER_MAX_OUTPUT_PIXELS: "1000000" });
  small = dataUrl(await gradientPng(64, 48));
  overLimit = dataUrl(await gradientPng(1100, 1000));
}, 120_000);
afterAll(async () => {
  await service?.close();
});

interface ErrorBody {
  code: string;
  message: string;
  requestId: string;
}

const withoutRequestId = ({ requestId: _requestId, ...rest }: ErrorBody) => rest;

async function jobsOf(key: string): Promise<JobBody[]> {
  const response = await call(service, "GET", "/jobs", key);
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: JobBody[] }).data;
}

const image = (which: string) => (which === "SMALL" ? small : which === "OVER" ? overLimit : which === "JUNK" ? notAnImage : which);

describe("a job that cannot succeed is refused before it exists", () => {
  it.each([
    ["style transfer: an unknown style", "/tools/style-transfer", { imageUrl: "SMALL", style: "picasso" }, 400, "INVALID_INPUT"],
    ["style transfer: bytes that are not an image", "/tools/style-transfer", { imageUrl: "JUNK", style: "mathura" }, 422, "IMAGE_UNDECODABLE"],
    ["style transfer: a result over the output limit", "/tools/style-transfer", { imageUrl: "OVER", style: "mathura" }, 413, "OUTPUT_TOO_LARGE"],
    ["background removal: a replacement beside onlyMask", "/tools/background-remove", { imageUrl: "SMALL", replacement: "white", onlyMask: true }, 400, "INVALID_INPUT"],
    ["background removal: an unknown model", "/tools/background-remove", { imageUrl: "SMALL", model: "no-such-matte" }, 400, "INVALID_INPUT"],
    ["background removal: a described scene with no photographic generator", "/tools/background-remove", { imageUrl: "SMALL", replacement: "a sunny beach" }, 503, "MODEL_NOT_INSTALLED"],
    ["background removal: bytes that are not an image", "/tools/background-remove", { imageUrl: "JUNK", model: "portrait-selfie" }, 422, "IMAGE_UNDECODABLE"],
    ["background removal: a result over the output limit", "/tools/background-remove", { imageUrl: "OVER", model: "portrait-selfie" }, 413, "OUTPUT_TOO_LARGE"],
    ["generate: an option the model does not take", "/generate", { prompt: "an owl", model: "cvae-quickdraw", steps: 30 }, 400, "INVALID_INPUT"],
    ["generate: an unknown model", "/generate", { prompt: "an owl", model: "no-such-painter" }, 400, "INVALID_INPUT"],
    ["generate: a size outside the model's bounds", "/generate", { prompt: "an owl", model: "cvae-quickdraw", width: 20, height: 20 }, 400, "INVALID_INPUT"],
    ["generate: a named model's result over the output limit", "/generate", { prompt: "an owl", model: "cvae-quickdraw", width: 1024, height: 1024 }, 413, "OUTPUT_TOO_LARGE"],
    ["generate: the default model's result over the output limit", "/generate", { prompt: "an owl", width: 1024, height: 1024 }, 413, "OUTPUT_TOO_LARGE"],
  ] as const)("%s: the synchronous answer, and no job", async (_name, path, template, status, code) => {
    const body = { ...template, ...("imageUrl" in template ? { imageUrl: image(template.imageUrl) } : {}) };
    const syncAnswer = await service.post(path, body, await service.createKey("sync"));
    const sync = (await syncAnswer.json()) as ErrorBody;
    expect([syncAnswer.status, sync.code]).toEqual([status, code]);

    const jobKey = await service.createKey("job", 10);
    const jobAnswer = await service.post(path, body, jobKey, { prefer: "respond-async" });
    expect(jobAnswer.status).toBe(status);
    expect(withoutRequestId((await jobAnswer.json()) as ErrorBody)).toEqual(withoutRequestId(sync));
    expect(await jobsOf(jobKey)).toEqual([]);
  });

  it.each([
    ["style transfer", "/tools/style-transfer", { imageUrl: "SMALL", style: "mathura" }],
    ["background removal", "/tools/background-remove", { imageUrl: "SMALL", model: "portrait-selfie", replacement: "white" }],
    ["generate", "/generate", { prompt: "an owl", model: "cvae-quickdraw", width: 64, height: 64 }],
  ] as const)("%s that can succeed is accepted and succeeds", async (_name, path, template) => {
    const body = { ...template, ...("imageUrl" in template ? { imageUrl: image(template.imageUrl) } : {}) };
    const key = await service.createKey("ok");
    const accepted = await service.post(path, body, key, { prefer: "respond-async" });
    expect(accepted.status).toBe(202);
    const done = await finishedJob(service, key, ((await accepted.json()) as JobBody).id);
    expect(done.status).toBe("succeeded");
  });
});
