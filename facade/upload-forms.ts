/**
 * The `multipart/form-data` form of every operation that takes an image: the JSON body's fields as
 * form fields, with the image in a file part instead of a URL (`image` for `imageUrl`, and
 * `replacement` as an image file where the body's `replacement` takes one). Each form is read from
 * the operation's JSON request schema in the OpenAPI document, so the form the reader
 * (multipart-body.ts) accepts and the one the document describes ({@link documentUploads}) are the
 * JSON body's, field for field: a field added to a procedure's schema is a form field too.
 *
 * Form fields are text. A field whose JSON type is not a string (`scale`, `strength`, `onlyMask`) is
 * read as the JSON value its text spells (`4`, `0.8`, `true`); text that spells none is passed on as
 * it is, and the schema refuses it as it would in JSON (`Expected integer between 2 and 8 for scale
 * but received "four"`). String fields are taken as they are (`model=123` is the text "123").
 */
import type { OpenAPIObject } from "trpc-to-openapi";
import { defaultOf } from "../core/config.js";
import { ACCEPTED_IMAGE_FORMAT_NAMES } from "../core/image-formats.js";

/** A body field that can hold an image, and the file part that carries it as a file. */
interface ImagePart {
  /** The file part's name. */
  part: string;
  /** The JSON body's field it fills (with the file as a data URL). */
  field: string;
  /** The field takes text besides an image (a colour, a description): the part may also be a text field. */
  alsoText: boolean;
  /** What the file is, for the document. */
  description: string;
}

const IMAGE_PARTS: readonly ImagePart[] = [
  {
    part: "image",
    field: "imageUrl",
    alsoText: false,
    description:
      `The source image as a file (multipart form of \`imageUrl\`): ${ACCEPTED_IMAGE_FORMAT_NAMES}, at most ATELIER_MAX_IMAGE_BYTES (${defaultOf("ATELIER_MAX_IMAGE_BYTES")} by default). ` +
      "Its type is read from its bytes; the part's Content-Type and file name are not used.",
  },
  {
    part: "replacement",
    field: "replacement",
    alsoText: true,
    description: "The background image as a file, scaled to cover (multipart form of a `data:` URL in `replacement`); as a text field, `replacement` takes what the JSON field takes.",
  },
];

/** The field of an operation's form whose presence makes it an image operation. */
const SOURCE_FIELD = "imageUrl";

/** How a text field's value is read: as it is, or as the JSON value it spells. */
export type FieldReading = "text" | "json";

export interface UploadForm {
  /** File parts, by name: the body field each fills. */
  files: ReadonlyMap<string, string>;
  /** Text fields, by name (the body field of the same name): how each value is read. */
  fields: ReadonlyMap<string, FieldReading>;
  /** File parts a form must carry. */
  requiredFiles: readonly string[];
}

type Json = Record<string, unknown>;

interface JsonRequestSchema {
  properties: Record<string, Json>;
  required?: string[];
}

/** The JSON request schema of each POST operation, by path (`/v1/tools/upscale`). */
function jsonRequestSchemas(document: OpenAPIObject): Map<string, { operation: Json; schema: JsonRequestSchema }> {
  const found = new Map<string, { operation: Json; schema: JsonRequestSchema }>();
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    const operation = (item as Record<string, Json | undefined>).post;
    const content = (operation?.requestBody as { content?: Record<string, { schema?: JsonRequestSchema }> } | undefined)?.content;
    const schema = content?.["application/json"]?.schema;
    if (operation && schema?.properties) found.set(path, { operation, schema });
  }
  return found;
}

/** A JSON schema's types (`type` may be a list). */
function typesOf(schema: Json): string[] {
  const type = schema.type;
  return Array.isArray(type) ? (type as string[]) : typeof type === "string" ? [type] : [];
}

function formOf(schema: JsonRequestSchema): UploadForm | undefined {
  if (!(SOURCE_FIELD in schema.properties)) return undefined;
  const files = new Map<string, string>();
  const fields = new Map<string, FieldReading>();
  for (const [name, property] of Object.entries(schema.properties)) {
    const image = IMAGE_PARTS.find((candidate) => candidate.field === name);
    if (image) files.set(image.part, image.field);
    if (image && !image.alsoText) continue;
    const types = typesOf(property);
    fields.set(name, types.length > 0 && !types.includes("string") ? "json" : "text");
  }
  const requiredFiles = IMAGE_PARTS.filter((image) => schema.required?.includes(image.field)).map((image) => image.part);
  return { files, fields, requiredFiles };
}

/** The form of every operation that takes an image, by its path in `document` (`/v1/tools/upscale`). */
export function uploadForms(document: OpenAPIObject): Map<string, UploadForm> {
  const forms = new Map<string, UploadForm>();
  for (const [path, { schema }] of jsonRequestSchemas(document)) {
    const form = formOf(schema);
    if (form) forms.set(path, form);
  }
  return forms;
}

/** What an operation's form takes, for messages: "the file part image and the fields scale, model, ...". */
export function formText(form: UploadForm): string {
  const names = (noun: string, list: string[]) => `the ${noun}${list.length === 1 ? "" : "s"} ${list.join(", ")}`;
  return `${names("file part", [...form.files.keys()])} and ${names("field", [...form.fields.keys()])}`;
}

const binary = (description: string): Json => ({ type: "string", format: "binary", description });

/**
 * `document` with a `multipart/form-data` request body beside the JSON one on every operation that
 * takes an image, derived from the JSON body's schema; changes and returns it.
 */
export function documentUploads(document: OpenAPIObject): OpenAPIObject {
  for (const { operation, schema } of jsonRequestSchemas(document).values()) {
    if (!formOf(schema)) continue;
    const properties: Record<string, Json> = {};
    for (const [name, property] of Object.entries(schema.properties)) {
      const image = IMAGE_PARTS.find((candidate) => candidate.field === name);
      if (!image) properties[name] = property;
      else if (!image.alsoText) properties[image.part] = binary(image.description);
      else {
        const { description, ...text } = property;
        properties[image.part] = { description, anyOf: [text, binary(image.description)] };
      }
    }
    const required = (schema.required ?? []).map((name) => IMAGE_PARTS.find((image) => image.field === name && !image.alsoText)?.part ?? name);
    const body = operation.requestBody as { content: Record<string, unknown> };
    body.content["multipart/form-data"] = { schema: { type: "object", properties, required, additionalProperties: false } };
  }
  return document;
}
