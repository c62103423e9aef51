/** The document names every catalogued model on the field that takes it: the lists come from the catalog. */
import { describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "../../facade/openapi-document.js";
import { entriesForTask, type ModelTask } from "../../models/catalog/model-catalog.js";

type Body = { requestBody: { content: { "application/json": { schema: { properties: Record<string, { description: string }> } } } } };
const document = buildOpenApiDocument("test") as unknown as { paths: Record<string, { post: Body }> };

const FIELDS: [path: string, field: string, task: ModelTask][] = [
  ["/v1/tools/upscale", "model", "upscale"],
  ["/v1/tools/style-transfer", "style", "style-transfer"],
  ["/v1/tools/background-remove", "model", "background-remove"],
  ["/v1/generate", "model", "generate"],
];

describe("model lists in the document", () => {
  it.each(FIELDS)("%s %s names every %s model of the catalog", (path, field, task) => {
    const description = document.paths[path]!.post.requestBody.content["application/json"].schema.properties[field]!.description;
    const ids = entriesForTask(task).map((entry) => entry.id);
    expect(ids.length).toBeGreaterThan(0);
    for (const id of ids) expect(description).toContain(`\`${id}\``);
  });
});
