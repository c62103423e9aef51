/**
 * The builtin engine on a machine where the prompt-modifier lists were never pulled: it still
 * answers (offline, fresh machine) from its own tables, without flavour-list details, and says so.
 * Chosen over MODEL_NOT_INSTALLED because the style and mood tables, the per-subject terms and the
 * negative vocabulary are the project's own and need no download.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BuiltinPromptEngine, MODIFIER_LISTS_MISSING_NOTE } from "../../workers/prompt/builtin-engine.js";
import { SUBJECT_CLASS_INFO } from "../../workers/prompt/subject-classes.js";
import { addedTerms, PROPERTY_PROMPTS } from "./prompt-fixtures.js";

const empty = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-prompt-empty-"));
afterAll(() => fs.rmSync(empty, { recursive: true, force: true }));

describe("builtin prompt engine without the prompt-modifier lists", () => {
  const warnings: string[] = [];
  const logger = { warn: (_: unknown, message: string) => warnings.push(message), info: () => {}, error: () => {}, debug: () => {} };
  const engine = new BuiltinPromptEngine({ modifiersFolder: empty, clipMergesFile: path.join(empty, "missing.gz"), logger: logger as never });

  it("starts, and says the lists are missing in its status and log", () => {
    expect(engine.status.modifierLists).toBe("missing");
    expect(engine.status.index).toBeUndefined();
    expect(engine.status.tokenCounter).toBe("approximate");
    expect(warnings).toContain(MODIFIER_LISTS_MISSING_NOTE);
  });

  it("still expands styles and moods, adds curated details, and notes what is missing", () => {
    const result = engine.improve({ prompt: "a cat on a roof", style: "watercolor", mood: "cozy", seed: 3, variants: 2, maxTokens: 0 });
    expect(result.model).toBe("prompt-builtin");
    expect(result.notes).toContain(MODIFIER_LISTS_MISSING_NOTE);
    const variant = result.variants[0]!;
    expect(variant.prompt.startsWith("a watercolor painting of a cat on a roof, ")).toBe(true);
    expect(variant.styleTerms.length).toBeGreaterThanOrEqual(3);
    expect(variant.moodTerms.length).toBeGreaterThanOrEqual(3);
    const curated = Object.values(SUBJECT_CLASS_INFO.animal.fallback).flat();
    expect(variant.detailTerms.length).toBeGreaterThan(0);
    for (const term of variant.detailTerms) expect(curated).toContain(term);
    expect(variant.negativePrompt).toMatch(/blurry/);
    expect(result.variants).toHaveLength(2);
    expect(result.variants[1]!.prompt).not.toBe(variant.prompt);
  });

  it("keeps the user's words, adds no medium of its own, and stays within the budget by a conservative count", () => {
    for (const prompt of PROPERTY_PROMPTS) {
      const result = engine.improve({ prompt, style: "", mood: "", seed: 1, variants: 1, maxTokens: 0 });
      const variant = result.variants[0]!;
      const added = addedTerms(variant, prompt);
      expect(added, variant.prompt).toBeDefined();
      expect(added!.lead).toBe("");
      expect(engine.countTokens(variant.prompt)).toBeLessThanOrEqual(77);
    }
  });

  it("works with no folder configured at all", () => {
    const bare = new BuiltinPromptEngine({});
    expect(bare.status.modifierLists).toBe("missing");
    expect(bare.improve({ prompt: "a lighthouse", style: "film noir", mood: "", seed: 1, variants: 1, maxTokens: 0 }).variants[0]!.prompt).toMatch(
      /^a film noir still of a lighthouse, /,
    );
  });
});
