/** An image as bytes whose data URL is `data:<mimeType>;base64,` and their base64 (RequestContext.keepImage). */
export interface ImageBytes {
  bytes: Uint8Array;
  mimeType: string;
}
