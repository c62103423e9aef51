/**
 * The router's side of a replacement: what the background worker is sent for each kind, with the
 * image fetcher and the text-to-image worker faked (so the composition is tested without models).
 */
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { AtelierError } from "../../core/errors.js";
import type { GenerateRequest } from "../../gen/atelier/generation/v1/generation_service.js";
import { ModelTask, type ModelRecord } from "../../gen/atelier/catalog/v1/catalog_service.js";
import { GENERATION_OPTIONS } from "../../models/catalog/catalog-types.js";
import type { Image } from "../../gen/atelier/image/v1/image.js";
import { BACKGROUND_NEGATIVE_PROMPT, parseReplacement, photographicGenerator, resolveReplacement } from "../../server/background/index.js";
import type { RequestContext } from "../../server/context.js";

const GENERATION = { defaultWidth: 512, defaultHeight: 512, minSize: 256, maxWidth: 1024, maxHeight: 1024, sizeMultiple: 8, options: GENERATION_OPTIONS };

function record(id: string, fields: Partial<ModelRecord> = {}): ModelRecord {
  return { id, task: ModelTask.MODEL_TASK_GENERATE, installed: false, disabled: false, photographic: false, installCommand: `npm run models -- pull ${id}`, generation: GENERATION, ...fields } as ModelRecord;
}

interface Fake {
  ctx: RequestContext;
  generated: GenerateRequest[];
  fetched: string[];
  listed: ModelTask[];
}

function fakeContext(models: ModelRecord[], fetch: (url: string) => Promise<Buffer> = async () => Buffer.from("bytes")): Fake {
  const fake: Fake = { generated: [], fetched: [], listed: [], ctx: undefined as unknown as RequestContext };
  const drawn: Image = { data: Buffer.from("generated png"), mimeType: "image/png", width: 608, height: 408 };
  fake.ctx = {
    requestId: "test",
    authorization: undefined,
    setHeader: () => {},
    signal: new AbortController().signal,
    services: {
      images: {
        fetch: async (url: string) => {
          fake.fetched.push(url);
          return { bytes: await fetch(url), contentType: "image/jpeg", source: "http" };
        },
      },
      workers: {
        listModels: async (request: { task: ModelTask }) => {
          fake.listed.push(request.task);
          return { models };
        },
        generate: async (request: GenerateRequest) => {
          fake.generated.push(request);
          return { image: drawn, model: request.model, seed: 1, steps: 1, interpretation: "" };
        },
      },
    },
  } as unknown as RequestContext;
  return fake;
}

async function png(width: number, height: number): Promise<Image> {
  const data = await sharp({ create: { width, height, channels: 3, background: "#808080" } }).png().toBuffer();
  return { data, mimeType: "image/png", width: 0, height: 0 };
}

describe("resolveReplacement", () => {
  it("sends colours, blur and nothing as they are, without calling any worker", async () => {
    const fake = fakeContext([]);
    const source = await png(40, 30);
    expect(await resolveReplacement(fake.ctx, parseReplacement("rgba(255, 0, 0, 0.5)"), source, undefined)).toEqual({
      field: { $case: "color", value: { red: 255, green: 0, blue: 0, alpha: 0.5 } },
      understood: "color:#ff000080",
    });
    expect(await resolveReplacement(fake.ctx, parseReplacement("blur"), source, undefined)).toEqual({ field: { $case: "blur", value: { sigma: 0 } }, understood: "blur" });
    expect(await resolveReplacement(fake.ctx, parseReplacement("blur(7px)"), source, undefined)).toEqual({ field: { $case: "blur", value: { sigma: 7 } }, understood: "blur:7" });
    expect(await resolveReplacement(fake.ctx, parseReplacement(""), source, undefined)).toEqual({ field: undefined, understood: "none" });
    expect([fake.fetched, fake.generated, fake.listed]).toEqual([[], [], []]);
  });

  it("fetches an image URL with the router's safe fetcher and sends the bytes", async () => {
    const fake = fakeContext([], async () => Buffer.from("jpeg bytes"));
    const resolved = await resolveReplacement(fake.ctx, parseReplacement("https://example.com/beach.jpg"), await png(40, 30), undefined);
    expect(fake.fetched).toEqual(["https://example.com/beach.jpg"]);
    expect(resolved.understood).toBe("image");
    expect(resolved.field).toMatchObject({ $case: "imageBackground", value: { data: Buffer.from("jpeg bytes"), mimeType: "image/jpeg" } });
  });

  it("words the fetcher's refusals for the replacement field", async () => {
    const fake = fakeContext([], async () => {
      throw new AtelierError("INVALID_IMAGE_URL", "imageUrl resolves to a private or reserved address (127.0.0.1), which this server does not fetch.");
    });
    const error = await resolveReplacement(fake.ctx, parseReplacement("http://localhost/x.png"), await png(40, 30), undefined).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AtelierError);
    expect(error).toMatchObject({ code: "INVALID_IMAGE_URL", issues: [{ path: "replacement" }] });
    expect((error as AtelierError).message).toBe(
      "the replacement image URL resolves to a private or reserved address (127.0.0.1), which this server does not fetch.",
    );
  });

  it("draws a described scene with the photographic model at the source's size and sends the drawing", async () => {
    const models = [record("cvae-quickdraw", { installed: true }), record("sd-off", { photographic: true, installed: true, disabled: true }), record("sd-x", { photographic: true, installed: true })];
    const fake = fakeContext(models);
    const generator = await photographicGenerator(fake.ctx);
    expect(generator.id).toBe("sd-x");
    const resolved = await resolveReplacement(fake.ctx, parseReplacement("a misty pine forest at dawn"), await png(600, 400), generator);
    expect(fake.generated).toHaveLength(1);
    expect(fake.generated[0]).toMatchObject({ prompt: "a misty pine forest at dawn", model: "sd-x", width: 600, height: 400, negativePrompt: BACKGROUND_NEGATIVE_PROMPT });
    expect(resolved).toEqual({
      field: { $case: "imageBackground", value: { data: Buffer.from("generated png"), mimeType: "image/png", width: 608, height: 408 } },
      understood: "generated:sd-x",
    });
    expect(fake.listed).toEqual([ModelTask.MODEL_TASK_GENERATE]);
  });

  it("refuses a description with 503 when no photographic model is installed, naming one to install", async () => {
    const fake = fakeContext([record("cvae-quickdraw", { installed: true }), record("sd-a", { photographic: true }), record("sd-b", { photographic: true })]);
    const error = (await photographicGenerator(fake.ctx).catch((caught: unknown) => caught)) as AtelierError;
    expect(error.code).toBe("MODEL_NOT_INSTALLED");
    expect(error.retryAfterSeconds).toBe(3600);
    expect(error.message).toContain("needs a photographic text-to-image model");
    expect(error.message).toContain("such as a Stable Diffusion export: `npm run models -- pull sd-a` (sd-a, also photographic: sd-b).");
    expect(error.message).toContain("Colours, image URLs and `blur` work without it.");

    const none = (await photographicGenerator(fakeContext([record("cvae-quickdraw", { installed: true })]).ctx).catch((caught: unknown) => caught)) as AtelierError;
    expect(none.message).toContain("such as a Stable Diffusion export: `npm run models -- pull <id>`.");
  });
});
