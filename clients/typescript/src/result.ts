/** Attaches response metadata to a body without making it part of the body's JSON. */
import type { ResponseMeta } from "./http-client.js";
import { AtelierImage, type ImageData } from "./image-output.js";
import type { APIResult, WithImages } from "./types.js";

export function withMeta<T extends object>(body: T, meta: ResponseMeta): APIResult<T> {
  Object.defineProperties(body, {
    _meta: { value: meta, enumerable: false },
    requestId: { value: meta.requestId, enumerable: false },
    rateLimit: { value: meta.rateLimit, enumerable: false },
  });
  return body as APIResult<T>;
}

export function withImages<T extends { data: ImageData[] }>(body: T): WithImages<T> {
  return { ...body, data: body.data.map((image) => new AtelierImage(image)) } as WithImages<T>;
}
