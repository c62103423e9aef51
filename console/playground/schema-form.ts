/**
 * A form from an operation's zod input schema: the schema is turned into JSON Schema (zod's own
 * conversion, the one the OpenAPI document also rests on) and each property into a field with the
 * control, bounds, default and help text the schema states. The API still validates every call;
 * the form's bounds only save a round trip.
 */
import { z } from "zod";

export type FieldControl = "image" | "text" | "textarea" | "integer" | "number" | "select" | "checkbox";

export interface FormField {
  /** The JSON property the value is sent as. */
  name: string;
  /** Visible label, from the property name (`negativePrompt` → "Negative prompt"). */
  label: string;
  control: FieldControl;
  required: boolean;
  /** Help text: the schema's description. */
  description?: string;
  default?: string | number | boolean;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  /** Choices of a `select`. */
  options?: string[];
  /** A regular expression the value must match (HTML `pattern`). */
  pattern?: string;
  example?: string;
}

interface JsonSchemaProperty {
  type?: string;
  description?: string;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  enum?: unknown[];
  pattern?: string;
  example?: unknown;
}

/** Fields holding a source image: picked, dropped or given as a URL. */
const IMAGE_FIELDS = new Set(["imageUrl"]);
/** Text fields long enough for several lines. */
const LONG_TEXT = 200;

/** "negativePrompt" → "Negative prompt"; "imageUrl" → "Image". */
export function fieldLabel(name: string): string {
  if (IMAGE_FIELDS.has(name)) return "Image";
  const words = name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function controlOf(name: string, property: JsonSchemaProperty): FieldControl {
  if (IMAGE_FIELDS.has(name)) return "image";
  if (property.enum) return "select";
  switch (property.type) {
    case "integer":
      return "integer";
    case "number":
      return "number";
    case "boolean":
      return "checkbox";
    default:
      return (property.maxLength ?? 0) > LONG_TEXT ? "textarea" : "text";
  }
}

/** The form fields of `schema`, in the schema's order. */
export function formFields(schema: z.ZodType): FormField[] {
  const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as {
    properties?: Record<string, JsonSchemaProperty>;
    required?: string[];
  };
  const required = new Set(json.required ?? []);
  return Object.entries(json.properties ?? {}).map(([name, property]) => {
    const field: FormField = { name, label: fieldLabel(name), control: controlOf(name, property), required: required.has(name) };
    if (property.description !== undefined) field.description = property.description;
    if (typeof property.default === "string" || typeof property.default === "number" || typeof property.default === "boolean") field.default = property.default;
    if (property.minimum !== undefined) field.minimum = property.minimum;
    if (property.maximum !== undefined) field.maximum = property.maximum;
    if (property.maxLength !== undefined) field.maxLength = property.maxLength;
    if (property.enum) field.options = property.enum.map(String);
    if (property.pattern !== undefined) field.pattern = property.pattern;
    if (typeof property.example === "string") field.example = property.example;
    return field;
  });
}
