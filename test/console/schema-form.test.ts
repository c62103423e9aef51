/** The playground's forms come from the API's own input schemas: controls, bounds, defaults, choices. */
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { PLAYGROUND_OPERATIONS, playgroundOperation } from "../../console/playground/playground-operations.js";
import { fieldLabel, formFields } from "../../console/playground/schema-form.js";
import { OPERATIONS } from "../../contract/operations.js";

describe("schema forms", () => {
  it("turns the upscale schema into an image field, a bounded integer, a model text field, a quality and a format choice", () => {
    const fields = formFields(playgroundOperation("upscale")!.input);
    expect(fields.map(({ name, control, required }) => [name, control, required])).toEqual([
      ["imageUrl", "image", true],
      ["scale", "integer", false],
      ["model", "text", false],
      ["quality", "select", false],
      ["outputFormat", "select", false],
    ]);
    expect(fields[1]).toMatchObject({ label: "Scale", minimum: 2, maximum: 8, default: 2 });
    expect(fields[1]!.description).toMatch(/^Enlargement factor/);
    // No default: the page offers "(default)", which leaves the field out.
    expect(fields[3]).toMatchObject({ label: "Quality", options: ["fast", "balanced", "max"] });
    expect(fields[3]!.default).toBeUndefined();
    expect(fields[4]).toMatchObject({ label: "Output format", options: ["png", "jpeg", "webp"], default: "png" });
  });

  it.each([
    ["negativePrompt", "Negative prompt"],
    ["imageUrl", "Image"],
    ["preserveColors", "Preserve colors"],
    ["seed", "Seed"],
  ])("labels %s as %s", (name, label) => {
    expect(fieldLabel(name)).toBe(label);
  });

  it("makes long text a textarea and booleans checkboxes", () => {
    const fields = formFields(z.object({ prompt: z.string().max(2000), short: z.string().max(40), flag: z.boolean().default(true) }));
    expect(fields.map((field) => [field.control, field.default])).toEqual([
      ["textarea", undefined],
      ["text", undefined],
      ["checkbox", true],
    ]);
  });

  it("offers every metered REST operation of the list", () => {
    const restPaths = OPERATIONS.filter((operation) => operation.method === "POST" && "metered" in operation).map((operation) => operation.path as string);
    expect(PLAYGROUND_OPERATIONS.map((operation) => operation.path).sort()).toEqual(restPaths.sort());
  });
});
