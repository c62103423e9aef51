/**
 * Request and response types, taken from the generated OpenAPI types by path and method so they
 * follow the document: when an operation moves or its schema changes, regeneration changes these.
 */
import type { paths } from "./generated/openapi.js";
import type { AtelierImage } from "./image-output.js";
import type { ImageInput } from "./image-input.js";
import type { ResponseMeta } from "./http-client.js";

type JsonBody<T> = T extends { requestBody: { content: { "application/json": infer B } } } ? B : never;
type JsonResponse<T> = T extends { responses: { 200: { content: { "application/json": infer R } } } } ? R : never;

export type GenerateRequest = JsonBody<paths["/api/v1/generate"]["post"]>;
export type GenerateResponse = JsonResponse<paths["/api/v1/generate"]["post"]>;
export type UpscaleRequest = JsonBody<paths["/api/v1/tools/upscale"]["post"]>;
export type UpscaleResponse = JsonResponse<paths["/api/v1/tools/upscale"]["post"]>;
export type StyleTransferRequest = JsonBody<paths["/api/v1/tools/style-transfer"]["post"]>;
export type StyleTransferResponse = JsonResponse<paths["/api/v1/tools/style-transfer"]["post"]>;
export type BackgroundRemoveRequest = JsonBody<paths["/api/v1/tools/background-remove"]["post"]>;
export type BackgroundRemoveResponse = JsonResponse<paths["/api/v1/tools/background-remove"]["post"]>;
export type PromptImproveRequest = JsonBody<paths["/api/v1/prompt/improve"]["post"]>;
export type PromptImproveResponse = JsonResponse<paths["/api/v1/prompt/improve"]["post"]>;
export type ModelList = JsonResponse<paths["/api/v1/models"]["get"]>;
export type Model = ModelList["data"][number];
export type Liveness = JsonResponse<paths["/healthz"]["get"]>;
export type Readiness = JsonResponse<paths["/readyz"]["get"]>;

/**
 * A request that takes a source image: `image` is anything {@link ImageInput} accepts. Local content
 * (a path, bytes, a Blob, a `file:` URL) is sent as a multipart form with the file as it is; a URL
 * goes in the JSON body as `imageUrl`.
 */
export type WithImage<R extends { imageUrl: string }> = Omit<R, "imageUrl"> & ({ image: ImageInput; imageUrl?: never } | { imageUrl: string; image?: never });

/** Background removal's params: `replacement` is text (a colour, a URL, `blur`, a description) or an image, as `image` is. */
export type BackgroundRemoveParams = WithImage<Omit<BackgroundRemoveRequest, "replacement"> & { replacement?: string | Exclude<ImageInput, string> }>;

/** An image response, its `data` entries as {@link AtelierImage}s. */
export type WithImages<R extends { data: unknown[] }> = Omit<R, "data"> & { data: AtelierImage[] };

/**
 * What every method returns: the response body, plus (not enumerable, so JSON stays the body) the
 * request id, the quota headers and the raw headers.
 */
export type APIResult<T> = T & { readonly _meta: ResponseMeta; readonly requestId: string | null; readonly rateLimit: ResponseMeta["rateLimit"] };

/** What each operation takes and gives, by client method name: for jobs, which run any of them. */
export interface OperationTypes {
  "images.generate": { params: GenerateRequest; result: WithImages<GenerateResponse> };
  "tools.upscale": { params: WithImage<UpscaleRequest>; result: WithImages<UpscaleResponse> };
  "tools.styleTransfer": { params: WithImage<StyleTransferRequest>; result: WithImages<StyleTransferResponse> };
  "tools.removeBackground": { params: BackgroundRemoveParams; result: WithImages<BackgroundRemoveResponse> };
  "prompts.improve": { params: PromptImproveRequest; result: PromptImproveResponse };
}
