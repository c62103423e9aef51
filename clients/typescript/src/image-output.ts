/** An image in a response, with helpers to get its bytes or save it, instead of handling data URLs by hand. */
import { fromBase64 } from "./base64.js";
import { files } from "./platform.js";

export interface ImageData {
  url: string;
  mimeType: string;
  width: number;
  height: number;
}

export class AtelierImage implements ImageData {
  readonly url: string;
  readonly mimeType: string;
  readonly width: number;
  readonly height: number;

  constructor(data: ImageData) {
    this.url = data.url;
    this.mimeType = data.mimeType;
    this.width = data.width;
    this.height = data.height;
  }

  /** The encoded image (PNG, JPEG or WebP as `mimeType` says). */
  bytes(): Uint8Array<ArrayBuffer> {
    const comma = this.url.indexOf(",");
    if (!this.url.startsWith("data:") || comma < 0) throw new TypeError("This image is not a data URL; fetch its url instead.");
    const header = this.url.slice(0, comma);
    const payload = this.url.slice(comma + 1);
    return header.endsWith(";base64") ? fromBase64(payload) : (new TextEncoder().encode(decodeURIComponent(payload)) as Uint8Array<ArrayBuffer>);
  }

  blob(): Blob {
    return new Blob([this.bytes()], { type: this.mimeType });
  }

  /** Writes the image to `path` (Node only) and returns the path. */
  async save(path: string): Promise<string> {
    await files("save()").writeFile(path, this.bytes());
    return path;
  }

  /** Serialises as the plain API object, so results round-trip through JSON unchanged. */
  toJSON(): ImageData {
    return { url: this.url, mimeType: this.mimeType, width: this.width, height: this.height };
  }
}
