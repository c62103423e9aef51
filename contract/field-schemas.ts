/**
 * Field schemas shared by the procedures. Every bound and default lives here or in the procedure's
 * schema, and the OpenAPI document is generated from them, so the docs cannot drift.
 * Messages follow one shape: "Expected <what> for <field> but received <value>".
 */
import { z } from "zod";
import type { Bounds } from "../core/limits.js";
import { ACCEPTED_IMAGE_FORMAT_NAMES } from "../core/image-formats.js";

function received(input: unknown): string {
  if (typeof input === "string") return JSON.stringify(input.length > 40 ? `${input.slice(0, 40)}…` : input);
  if (input === undefined) return "nothing";
  return JSON.stringify(input) ?? String(input);
}

/** An integer in [min, max] with a sentence naming the range when it is not. */
export function boundedInteger(field: string, { min, max }: Bounds) {
  const error = (issue: { input?: unknown }) => `Expected integer between ${min} and ${max} for ${field} but received ${received(issue.input)}`;
  return z.int({ error }).min(min, { error }).max(max, { error });
}

/** A number in [min, max]. */
export function boundedNumber(field: string, { min, max }: Bounds) {
  const error = (issue: { input?: unknown }) => `Expected number between ${min} and ${max} for ${field} but received ${received(issue.input)}`;
  return z.number({ error }).min(min, { error }).max(max, { error });
}

/** A string of `min` to `max` characters. */
export function boundedText(field: string, { min, max }: Bounds) {
  const error = (issue: { input?: unknown }) =>
    typeof issue.input === "string"
      ? `Expected ${field} of ${min} to ${max} characters but received ${issue.input.length}`
      : `Expected string for ${field} but received ${received(issue.input)}`;
  return z.string({ error }).min(min, { error }).max(max, { error });
}

export function oneOf<const T extends readonly [string, ...string[]]>(field: string, values: T) {
  return z.enum(values, {
    error: (issue) => `Expected one of ${values.join(", ")} for ${field} but received ${received(issue.input)}`,
  });
}

export function flag(field: string) {
  return z.boolean({ error: (issue) => `Expected true or false for ${field} but received ${received(issue.input)}` });
}

export const imageUrlField = z
  .string({ error: (issue) => `Expected string for imageUrl but received ${received(issue.input)}` })
  .min(1, { error: "Expected an http(s):// or data:image/...;base64, URL for imageUrl but received an empty string" })
  .meta({
    description:
      "Source image: an `http://` or `https://` URL the server fetches (public addresses only, at most 3 redirects), " +
      "or a `data:image/<type>;base64,` URL. Any `url` of a previous response can be passed back as is. " +
      `The image must be ${ACCEPTED_IMAGE_FORMAT_NAMES}; SVG and other vector formats are refused (422).`,
    example: "https://upload.wikimedia.org/wikipedia/commons/3/3f/JPEG_example_flower.jpg",
  });

export const OUTPUT_FORMATS = ["png", "jpeg", "webp"] as const;
export type OutputFormatName = (typeof OUTPUT_FORMATS)[number];

export const outputFormatField = oneOf("outputFormat", OUTPUT_FORMATS)
  .default("png")
  .meta({ description: "Encoding of the returned image: `png` (default, lossless, keeps transparency), `jpeg` (quality 92, transparency flattened onto white) or `webp` (quality 90, keeps transparency)." });

/** Catalog ids: lower-case letters, digits and hyphens. */
export function modelIdField(description: string) {
  return z
    .string({ error: (issue) => `Expected string for model but received ${received(issue.input)}` })
    .regex(/^[a-z0-9][a-z0-9-]{0,63}$/, { error: (issue) => `Expected a model id (lower-case letters, digits, hyphens; see GET /api/v1/models) for model but received ${received(issue.input)}` })
    .meta({ description });
}

/**
 * A request body: a JSON object with exactly these fields. Unknown fields are refused, naming the
 * accepted ones, because a misspelt optional field (`output_format`) would otherwise be ignored.
 */
export function requestBody<Shape extends z.ZodRawShape>(shape: Shape) {
  const accepted = Object.keys(shape).join(", ");
  return z.strictObject(shape, {
    error: (issue) => {
      if (issue.code === "unrecognized_keys") return `Unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((key) => JSON.stringify(key)).join(", ")}; accepted fields: ${accepted}`;
      if (issue.code === "invalid_type") return `Expected a JSON object with fields ${accepted} but received ${received(issue.input)}`;
      return undefined;
    },
  });
}
