/** The six synchronous operations, grouped as the client exposes them. */
import { metaOf, type HttpClient, type RequestOptions, type ResponseMeta } from "../http-client.js";
import type { JobData } from "../jobs-types.js";
import { Job, type Jobs } from "./jobs.js";
import { imageRequestBody } from "../image-request.js";
import { pathOf, type ClientMethodName } from "../operations.js";
import { withImages, withMeta } from "../result.js";
import type {
  APIResult,
  BackgroundRemoveParams,
  BackgroundRemoveResponse,
  GenerateRequest,
  GenerateResponse,
  Liveness,
  ModelList,
  PromptImproveRequest,
  PromptImproveResponse,
  Readiness,
  StyleTransferRequest,
  StyleTransferResponse,
  UpscaleRequest,
  UpscaleResponse,
  WithImage,
  WithImages,
} from "../types.js";

abstract class Resource {
  constructor(
    protected readonly http: HttpClient,
    private readonly jobs: Jobs,
  ) {}

  /**
   * POSTs an operation. A server with jobs may answer 202 and a job instead of the result (a call
   * that outlived its wait, or a repeat of one still running): the job is followed to its end, so
   * the caller gets the same result either way.
   */
  private async run<T>(method: ClientMethodName, body: object, options: RequestOptions | undefined): Promise<{ data: T; meta: ResponseMeta }> {
    const { response, body: bytes } = await this.http.send({ ...options, method: "POST", path: pathOf(method), body });
    const meta = metaOf(response);
    const data = JSON.parse(new TextDecoder().decode(bytes)) as T & Partial<JobData>;
    if (response.status !== 202 || data.object !== "job") return { data, meta };
    const job = new Job<unknown>(this.jobs, data as JobData, meta);
    await job.wait(options?.signal ? { signal: options.signal } : {});
    return { data: job.data.result as T, meta };
  }

  protected async post<T extends object>(method: ClientMethodName, body: object, options: RequestOptions | undefined): Promise<APIResult<T>> {
    const { data, meta } = await this.run<T>(method, body, options);
    return withMeta(data, meta);
  }

  protected async postImage<T extends { data: { url: string; mimeType: string; width: number; height: number }[] }>(
    method: ClientMethodName,
    body: object,
    options: RequestOptions | undefined,
  ): Promise<APIResult<WithImages<T>>> {
    const { data, meta } = await this.run<T>(method, body, options);
    return withMeta(withImages(data), meta);
  }
}

export class Images extends Resource {
  /** Text to image (`POST /api/v1/generate`). Only `prompt` is required. */
  generate(params: GenerateRequest, options?: RequestOptions): Promise<APIResult<WithImages<GenerateResponse>>> {
    return this.postImage<GenerateResponse>("images.generate", params, options);
  }
}

export class Tools extends Resource {
  /** Enlarges an image (`POST /api/v1/tools/upscale`). */
  async upscale(params: WithImage<UpscaleRequest>, options?: RequestOptions): Promise<APIResult<WithImages<UpscaleResponse>>> {
    return this.postImage<UpscaleResponse>("tools.upscale", await imageRequestBody(params), options);
  }

  /** Paints an image in a style (`POST /api/v1/tools/style-transfer`). */
  async styleTransfer(params: WithImage<StyleTransferRequest>, options?: RequestOptions): Promise<APIResult<WithImages<StyleTransferResponse>>> {
    return this.postImage<StyleTransferResponse>("tools.styleTransfer", await imageRequestBody(params), options);
  }

  /** Removes or replaces the background (`POST /api/v1/tools/background-remove`); `replacement` may be an image of the caller's. */
  async removeBackground(params: BackgroundRemoveParams, options?: RequestOptions): Promise<APIResult<WithImages<BackgroundRemoveResponse>>> {
    return this.postImage<BackgroundRemoveResponse>("tools.removeBackground", await imageRequestBody(params), options);
  }
}

export class Prompts extends Resource {
  /** Turns a short idea into a detailed prompt (`POST /api/v1/prompt/improve`). */
  improve(params: PromptImproveRequest, options?: RequestOptions): Promise<APIResult<PromptImproveResponse>> {
    return this.post<PromptImproveResponse>("prompts.improve", params, options);
  }
}

export class Models {
  constructor(private readonly http: HttpClient) {}

  /** Every model the server knows, installed or not (`GET /api/v1/models`; needs no key). */
  async list(options?: RequestOptions): Promise<APIResult<ModelList>> {
    const { data, meta } = await this.http.json<ModelList>({ ...options, method: "GET", path: pathOf("models.list") });
    return withMeta(data, meta);
  }
}

export class Health {
  constructor(private readonly http: HttpClient) {}

  /** Liveness (`GET /healthz`): answers while the server process runs. */
  async live(options?: RequestOptions): Promise<APIResult<Liveness>> {
    const { data, meta } = await this.http.json<Liveness>({ ...options, method: "GET", path: pathOf("health.live") });
    return withMeta(data, meta);
  }

  /** Readiness (`GET /readyz`): `ready` false (a 503, not retried) says which checks fail in `notReady`. */
  async ready(options?: RequestOptions): Promise<APIResult<Readiness>> {
    const { data, meta } = await this.http.json<Readiness>({ maxRetries: 0, ...options, method: "GET", path: pathOf("health.ready"), acceptStatuses: [503] });
    return withMeta(data, meta);
  }
}
