/**
 * The body of an operation that takes an image. A local image (a path, bytes, a Blob, a `file:` URL)
 * goes as a `multipart/form-data` form: the file in its `image` part, the other fields as text
 * (numbers and flags as their JSON text, which the server reads back as JSON), so the file travels
 * as it is rather than as base64, a third larger and encoded on both sides. An image the caller has
 * as a URL (http(s), a data URL, a previous result) goes in JSON as `imageUrl`, as before.
 *
 * Background removal's `replacement` may be an image of the caller's too: a second file part when
 * the source is a file, else a data URL in the JSON body (a form carries no `imageUrl`).
 */
import { fromBase64 } from "./base64.js";
import { bytesToDataURL, toImagePart, type ImageInput, type ImagePart } from "./image-input.js";

/** Params that may carry local images: `image` (or `imageUrl`) and, for background removal, `replacement`. */
type ImageParams = Record<string, unknown> & { image?: ImageInput; imageUrl?: string; replacement?: unknown };

/** A form field's text: strings as they are, anything else as its JSON. */
const fieldText = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value));

async function dataUrlOf(part: ImagePart): Promise<string> {
  return "url" in part ? part.url : bytesToDataURL(new Uint8Array(await part.file.arrayBuffer()), part.file.type || undefined);
}

/** A base64 data URL as the file it holds; undefined for any other URL (which a form carries as text). */
function fileOfDataUrl(url: string): ImagePart | undefined {
  const match = /^data:([^;,]*)(?:;[^,]*)?;base64,/i.exec(url);
  return match ? { file: new Blob([fromBase64(url.slice(match[0].length))], { type: match[1] }), filename: "replacement" } : undefined;
}

/** `params` as the JSON body (an object) or the multipart form (FormData) the operation takes. */
export async function imageRequestBody(params: ImageParams): Promise<object | FormData> {
  const { image, imageUrl, replacement, ...rest } = params;
  if (image === undefined && imageUrl === undefined) throw new TypeError("Pass the source image as `image` (a path, bytes, Blob or URL) or `imageUrl`.");
  const source: ImagePart = image === undefined ? { url: imageUrl! } : await toImagePart(image);
  // `replacement` as text (a colour, a URL, `blur`, a description) is a field like the others; anything else is an image.
  const backdrop = replacement === undefined || typeof replacement === "string" ? undefined : await toImagePart(replacement as ImageInput);
  const fields = { ...rest, ...(typeof replacement === "string" ? { replacement } : {}) };
  if ("url" in source) return { ...fields, imageUrl: source.url, ...(backdrop ? { replacement: await dataUrlOf(backdrop) } : {}) };
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) form.append(name, fieldText(value));
  if (backdrop) {
    // A data URL is longer than a form field may be: its bytes go as a file.
    const part = "file" in backdrop ? backdrop : (fileOfDataUrl(backdrop.url) ?? backdrop);
    if ("file" in part) form.append("replacement", part.file, part.filename);
    else form.append("replacement", part.url);
  }
  form.append("image", source.file, source.filename);
  return form;
}
