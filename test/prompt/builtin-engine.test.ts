/**
 * The builtin engine's promises, checked as properties over twenty prompts in seven style and mood
 * combinations: the user's words kept in order, nothing said twice, within the CLIP budget,
 * reproducible with a seed, distinct variants, free text woven in as written.
 */
import { describe, expect, it } from "vitest";
import { AtelierError } from "../../core/errors.js";
import { dedupeKeys } from "../../workers/prompt/dedupe-keys.js";
import { readModifierLists } from "../../workers/prompt/modifier-lists.js";
import { STYLE_PRESETS } from "../../models/catalog/prompt-presets/style-presets.js";
import {
  addedTerms,
  contentWordsInOrder,
  engineWithLists,
  hasClipVocabulary,
  hasModifierLists,
  isSubsequence,
  MODIFIERS_FOLDER,
  PROPERTY_PROMPTS,
  STYLE_MOOD_PAIRS,
} from "./prompt-fixtures.js";

const CASES = PROPERTY_PROMPTS.flatMap((prompt) => STYLE_MOOD_PAIRS.map(([style, mood]) => ({ prompt, style, mood })));

describe.skipIf(!hasModifierLists)("builtin prompt engine (with the prompt-modifier lists)", () => {
  const engine = engineWithLists();
  const improve = (prompt: string, style = "", mood = "", extra: { seed?: number; variants?: number; maxTokens?: number } = {}) =>
    engine.improve({ prompt, style, mood, seed: extra.seed ?? 7, variants: extra.variants ?? 1, maxTokens: extra.maxTokens ?? 0 });

  it("indexes the lists once and reports it", () => {
    expect(engine.status.modifierLists).toBe("indexed");
    expect(engine.status.index?.lines).toBe(100_969);
    expect(engine.status.index?.byKind.lighting).toBeGreaterThan(1000);
  });

  it("keeps every content word of the user's prompt, in order, verbatim", () => {
    for (const { prompt, style, mood } of CASES) {
      for (const variant of improve(prompt, style, mood, { variants: 2 }).variants) {
        expect(variant.prompt, `${prompt} | ${style} | ${mood}`).toContain(prompt);
        expect(isSubsequence(contentWordsInOrder(prompt), contentWordsInOrder(variant.prompt))).toBe(true);
      }
    }
  });

  it("never repeats a term or a user's word (case-insensitive, word forms folded)", () => {
    for (const { prompt, style, mood } of CASES) {
      const result = improve(prompt, style, mood, { variants: 3 });
      for (const variant of result.variants) {
        const added = addedTerms(variant, prompt)!;
        const userKeys = new Set(dedupeKeys(prompt));
        const lower = added.terms.map((term) => term.toLowerCase());
        expect(new Set(lower).size, variant.prompt).toBe(lower.length);
        // The user's own style or mood text is theirs to word as they like; everything else is checked.
        const userWoven = [style, mood].filter((text) => text !== "" && added.terms.includes(text));
        const seen = new Set(userWoven.flatMap(dedupeKeys));
        for (const term of [added.lead, ...added.terms].filter((term) => term !== "" && !userWoven.includes(term))) {
          for (const key of new Set(dedupeKeys(term))) {
            expect(userKeys.has(key), `"${term}" repeats the user's "${key}" in: ${variant.prompt}`).toBe(false);
            expect(seen.has(key), `"${key}" said twice in: ${variant.prompt}`).toBe(false);
            seen.add(key);
          }
        }
      }
    }
  });

  it.skipIf(!hasClipVocabulary)("fits the CLIP budget, default 77 and smaller ones, negative prompt included", () => {
    for (const maxTokens of [0, 60, 40, 24]) {
      for (const { prompt, style, mood } of CASES.filter((_, i) => i % 3 === 0)) {
        for (const variant of improve(prompt, style, mood, { maxTokens, variants: 2 }).variants) {
          const limit = maxTokens === 0 ? 77 : maxTokens;
          expect(engine.countTokens(variant.prompt), variant.prompt).toBeLessThanOrEqual(limit);
          expect(variant.tokens).toBe(engine.countTokens(variant.prompt));
          expect(engine.countTokens(variant.negativePrompt), variant.negativePrompt).toBeLessThanOrEqual(limit);
        }
      }
    }
  });

  it("adds real detail within the budget: a medium or style lead, several terms", () => {
    const result = improve("a cat on a roof", "", "", { seed: 1 });
    const variant = result.variants[0]!;
    expect(variant.detailTerms.length).toBeGreaterThanOrEqual(4);
    expect(variant.prompt).toMatch(/^(?:a|an) [\w\s]+ of a cat on a roof, /i);
    expect(variant.tokens).toBeGreaterThan(15);
  });

  it("returns an over-long prompt unchanged with nothing added, and says so", () => {
    const long = `a cat on a roof, ${"with many intricate ornaments and glowing lanterns, ".repeat(4)}under a starry sky`;
    const result = improve(long, "cinematic", "calm", { maxTokens: 24, variants: 3 });
    expect(result.overLimit).toBe(true);
    expect(result.variants).toHaveLength(1);
    expect(result.variants[0]!.prompt).toBe(long.trim());
    expect(result.variants[0]!.styleTerms).toEqual([]);
    expect(result.variants[0]!.moodTerms).toEqual([]);
    expect(result.variants[0]!.detailTerms).toEqual([]);
    expect(result.notes.join(" ")).toMatch(/over the 24-token limit: it is returned unchanged/);
  });

  it("is reproducible: the same seed gives the same answer", () => {
    for (const { prompt, style, mood } of CASES.filter((_, i) => i % 4 === 0)) {
      const first = improve(prompt, style, mood, { seed: 123, variants: 3 });
      const second = improve(prompt, style, mood, { seed: 123, variants: 3 });
      expect(second).toEqual(first);
      expect(first.seed).toBe(123);
    }
  });

  it("varies with the seed when candidates allow", () => {
    for (const prompt of PROPERTY_PROMPTS) {
      const prompts = new Set([1, 2, 3, 4, 5, 6].map((seed) => improve(prompt, "", "", { seed }).variants[0]!.prompt));
      expect(prompts.size, prompt).toBeGreaterThanOrEqual(3);
    }
  });

  it("picks a seed when none is given and reports it", () => {
    const result = engine.improve({ prompt: "a cat", style: "", mood: "", variants: 1, maxTokens: 0 });
    expect(Number.isInteger(result.seed)).toBe(true);
    expect(engine.improve({ prompt: "a cat", style: "", mood: "", seed: result.seed, variants: 1, maxTokens: 0 })).toEqual(result);
  });

  it("returns distinct variants, up to four", () => {
    for (const { prompt, style, mood } of CASES.filter((_, i) => i % 2 === 0)) {
      const result = improve(prompt, style, mood, { variants: 4 });
      const prompts = result.variants.map((variant) => variant.prompt);
      expect(new Set(prompts).size).toBe(prompts.length);
      expect(prompts.length, `${prompt} | ${style} | ${mood}`).toBe(4);
    }
  });

  it("weaves unknown style and mood text in as written, right after the user's words", () => {
    const result = improve("a red fox in the snow", "Kintsugi ceramics", "bittersweet longing");
    const variant = result.variants[0]!;
    expect(variant.prompt.startsWith("a red fox in the snow, Kintsugi ceramics, ")).toBe(true);
    expect(variant.prompt).toContain("bittersweet longing");
    expect(variant.styleTerms[0]).toBe("Kintsugi ceramics");
    expect(variant.moodTerms[0]).toBe("bittersweet longing");
    expect(result.style).toBe("Kintsugi ceramics");
    expect(result.mood).toBe("bittersweet longing");
  });

  it("expands known presets, found through synonyms and spelling variants", () => {
    const cases: [string, string, RegExp][] = [
      ["watercolor", "watercolour", /^a watercolor painting of a cat/],
      ["Watercolour", "watercolour", /^a watercolor painting of a cat/],
      ["3d", "3d-render", /^a 3d render of a cat/],
      ["Film Noir", "film-noir", /^a film noir still of a cat/],
      ["noir", "film-noir", /black and white/],
      ["in the style of anime", "anime", /^an anime illustration of a cat/],
      ["pixel-art", "pixel-art", /^pixel art of a cat/],
    ];
    for (const [style, id, pattern] of cases) {
      const result = improve("a cat", style, "");
      expect(result.style, style).toBe(id);
      expect(result.variants[0]!.prompt, style).toMatch(pattern);
      expect(result.variants[0]!.styleTerms.length, style).toBeGreaterThanOrEqual(3);
    }
    const calm = improve("a lake", "", "Serene");
    expect(calm.mood).toBe("calm");
    expect(calm.variants[0]!.moodTerms.length).toBeGreaterThanOrEqual(3);
  });

  it("accepts empty style and mood", () => {
    const result = improve("a lighthouse in a storm", "", "");
    expect(result.style).toBe("");
    expect(result.mood).toBe("");
    expect(result.variants[0]!.styleTerms).toEqual([]);
    expect(result.variants[0]!.moodTerms).toEqual([]);
    expect(result.variants[0]!.detailTerms.length).toBeGreaterThan(0);
  });

  it("finds the subject", () => {
    const subjects: [string, string][] = [
      ["a cat on a roof", "a cat"],
      ["portrait of a woman with red hair", "a woman"],
      ["draw me a dragon", "a dragon"],
      ["two old men playing chess in a park", "two old men"],
      ["a bowl of ramen", "a bowl of ramen"],
      ["The lighthouse keeper's daughter reading letters", "The lighthouse keeper's daughter"],
    ];
    for (const [prompt, subject] of subjects) expect(improve(prompt).variants[0]!.subject, prompt).toBe(subject);
  });

  it("chooses details for the subject: features of its surface, body framing only for bodies", () => {
    const fox = improve("a red fox in the snow", "", "", { variants: 4 });
    expect(fox.variants.some((variant) => variant.detailTerms.some((term) => /\bfur\b/.test(term)))).toBe(true);
    const dragon = improve("a dragon", "fantasy art", "", { variants: 4 });
    expect(dragon.variants.some((variant) => variant.detailTerms.some((term) => /\b(?:scales|claws)\b/.test(term)))).toBe(true);
    for (const seed of [1, 2, 3, 4, 5]) {
      const ramen = improve("a bowl of ramen", "", "", { seed, variants: 2 });
      for (const variant of ramen.variants) expect(variant.prompt).not.toMatch(/\b(?:portrait|full body|headshot)\b/);
    }
  });

  it("does not contradict the scene the user set", () => {
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const night = improve("a city street at night", "", "joyful", { seed, variants: 2 });
      for (const variant of night.variants) expect(variant.prompt).not.toMatch(/\b(?:golden hour|sunrise|sunset|daylight|morning|midday|sunny)\b/i);
      const sunny = improve("a beach at noon", "", "eerie", { seed });
      expect(sunny.variants[0]!.prompt).not.toMatch(/\bmoonlight\b/i);
    }
  });

  it("keeps to the medium of the style", () => {
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const watercolor = improve("a harbour with boats", "watercolour", "", { seed, variants: 2 });
      for (const variant of watercolor.variants) expect(variant.prompt).not.toMatch(/\b(?:octane|unreal|render|photo|photograph|35mm|85mm|realistic|bokeh)\b/i);
      const photo = improve("a harbour with boats", "photographic", "", { seed });
      expect(photo.variants[0]!.prompt).not.toMatch(/\b(?:brush ?strokes?|watercolor|oil painting|anime|pixel)\b/i);
    }
  });

  it("never adds a person's name (artists list) unless the user wrote it", () => {
    const lists = readModifierLists(MODIFIERS_FOLDER)!;
    const names = new Set(lists.artists.map((name) => name.toLowerCase()).filter((name) => name.includes(" ")));
    for (const { prompt, style, mood } of CASES) {
      for (const variant of improve(prompt, style, mood, { variants: 2 }).variants) {
        const added = addedTerms(variant, prompt)!.terms.join(", ").toLowerCase();
        for (const name of names) if (added.includes(name)) expect.fail(`added artist name "${name}" to: ${variant.prompt}`);
        expect(added).not.toMatch(/\b(?:by|in the style of|inspired by) [a-z]+ [a-z]+/);
      }
    }
    expect(improve("a garden", "by Claude Monet", "").variants[0]!.prompt).toContain("by Claude Monet");
  });

  it("writes a negative prompt that fits the style and never negates what the prompt asks for", () => {
    const render = improve("a toy robot", "3d render", "").variants[0]!;
    expect(render.negativePrompt).not.toMatch(/(?:^|, )(?:3d|render)(?:,|$)/);
    expect(render.negativePrompt).toMatch(/\bphoto\b/);
    const cartoonCat = improve("a cartoon cat", "photographic", "").variants[0]!;
    expect(cartoonCat.negativePrompt).not.toMatch(/\bcartoon\b/);
    const person = improve("a dancer on a stage", "", "").variants[0]!;
    expect(person.negativePrompt).toMatch(/bad anatomy/);
    expect(person.negativePrompt).toMatch(/malformed hands|poorly drawn face/);
    const landscape = improve("a misty valley", "", "").variants[0]!;
    expect(landscape.negativePrompt).not.toMatch(/anatomy|limbs|hands/);
    expect(improve("a sign that says OPEN", "", "").variants[0]!.negativePrompt).not.toMatch(/(?:^|, )text(?:,|$)/);
  });

  it("gives the style's terms and mood's terms as the pieces", () => {
    const result = improve("a lighthouse", "oil painting", "dramatic");
    const variant = result.variants[0]!;
    const preset = STYLE_PRESETS.find((style) => style.id === "oil-painting")!;
    expect(variant.styleTerms[0]).toBe("oil painting");
    expect(variant.styleTerms.slice(1).every((term) => preset.terms.includes(term))).toBe(true);
    for (const term of [...variant.styleTerms.slice(1), ...variant.moodTerms, ...variant.detailTerms]) expect(variant.prompt).toContain(term);
  });

  it("refuses bad requests with the field and the accepted range", () => {
    const refusal = (request: Partial<Parameters<typeof engine.improve>[0]>) => {
      try {
        engine.improve({ prompt: "a cat", style: "", mood: "", variants: 1, maxTokens: 0, ...request });
      } catch (error) {
        return error as AtelierError;
      }
      throw new Error("expected a refusal");
    };
    expect(refusal({ prompt: "   " }).message).toBe("Expected text of 1 to 2000 characters for prompt but received empty text.");
    expect(refusal({ prompt: "x".repeat(2001) }).code).toBe("INVALID_INPUT");
    expect(refusal({ variants: 5 }).message).toBe("Expected integer between 1 and 4 for variants but received 5.");
    expect(refusal({ maxTokens: 8 }).message).toBe("Expected integer between 16 and 512 for maxTokens but received 8.");
    expect(refusal({ style: "s".repeat(201) }).issues?.[0]?.path).toBe("style");
    expect(engine.improve({ prompt: "a cat", style: "", mood: "", variants: 0, maxTokens: 0, seed: 1 }).variants).toHaveLength(1);
  });

  it("answers in milliseconds once indexed", () => {
    const started = performance.now();
    for (const { prompt, style, mood } of CASES.slice(0, 40)) improve(prompt, style, mood);
    expect((performance.now() - started) / 40).toBeLessThan(250);
  });
});
