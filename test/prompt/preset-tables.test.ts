/** The curated style and mood tables, and how `style`/`mood` text is understood. */
import { describe, expect, it } from "vitest";
import { PROMPT_BUILTIN_DETAILS } from "../../models/catalog/prompt-presets/prompt-builtin-details.js";
import { isBlockedKey } from "../../workers/prompt/modifier-lists.js";
import { MOOD_PRESETS } from "../../models/catalog/prompt-presets/mood-presets.js";
import { matchMood, matchStyle, understoodAs } from "../../workers/prompt/preset-matching.js";
import { STYLE_PRESETS } from "../../models/catalog/prompt-presets/style-presets.js";
import { contentKeys } from "../../workers/prompt/term-keys.js";

describe("preset tables", () => {
  it("has at least 20 styles and 15 moods with unique ids", () => {
    expect(STYLE_PRESETS.length).toBeGreaterThanOrEqual(20);
    expect(MOOD_PRESETS.length).toBeGreaterThanOrEqual(15);
    expect(new Set(STYLE_PRESETS.map((preset) => preset.id)).size).toBe(STYLE_PRESETS.length);
    expect(new Set(MOOD_PRESETS.map((preset) => preset.id)).size).toBe(MOOD_PRESETS.length);
  });

  it("covers the styles and moods the issue names", () => {
    const styles = [
      "photographic", "cinematic", "anime", "digital art", "oil painting", "watercolour", "pixel art", "3D render",
      "line art", "comic", "fantasy art", "isometric", "low poly", "neon punk", "analog film",
    ];
    for (const style of styles) expect(matchStyle(style).kind, style).toBe("preset");
    for (const mood of ["calm", "dramatic", "joyful", "mysterious", "melancholic", "eerie", "romantic", "epic", "cozy"]) {
      expect(matchMood(mood).kind, mood).toBe("preset");
    }
  });

  it("gives every preset positive and negative terms, moods lighting, colour and atmosphere", () => {
    for (const style of STYLE_PRESETS) {
      expect(style.terms.length, style.id).toBeGreaterThanOrEqual(4);
      expect(style.negative.length, style.id).toBeGreaterThanOrEqual(3);
      expect(style.lead, style.id).toMatch(/ of$/);
    }
    for (const mood of MOOD_PRESETS) {
      expect(mood.lighting.length, mood.id).toBeGreaterThanOrEqual(2);
      expect(mood.color.length, mood.id).toBeGreaterThanOrEqual(2);
      expect(mood.atmosphere.length, mood.id).toBeGreaterThanOrEqual(2);
    }
  });

  it("contains nothing the engine must never add", () => {
    const terms = [...STYLE_PRESETS.flatMap((style) => [style.lead, ...style.terms]), ...MOOD_PRESETS.flatMap((mood) => [...mood.lighting, ...mood.color, ...mood.atmosphere])];
    for (const term of terms) for (const key of contentKeys(term)) expect(isBlockedKey(key), term).toBe(false);
  });

  it("names no preset twice: every alias selects exactly one preset", () => {
    for (const table of [STYLE_PRESETS, MOOD_PRESETS] as const) {
      const owner = new Map<string, string>();
      for (const preset of table) {
        for (const name of [preset.id, preset.name, ...preset.aliases]) {
          const key = name.toLowerCase().replace(/[\s_-]+/g, "");
          const previous = owner.get(key);
          if (previous !== undefined && previous !== preset.id) expect.fail(`"${name}" names both ${previous} and ${preset.id}`);
          owner.set(key, preset.id);
        }
      }
    }
  });

  it("is published for the catalog record", () => {
    expect(PROMPT_BUILTIN_DETAILS.styles.map((style) => style.id)).toEqual(STYLE_PRESETS.map((style) => style.id));
    expect(PROMPT_BUILTIN_DETAILS.moods.map((mood) => mood.id)).toEqual(MOOD_PRESETS.map((mood) => mood.id));
    expect(JSON.parse(JSON.stringify(PROMPT_BUILTIN_DETAILS))).toEqual(PROMPT_BUILTIN_DETAILS);
  });
});

describe("style and mood matching", () => {
  it.each([
    ["cinematic", "cinematic"],
    ["CINEMATIC", "cinematic"],
    ["  Cinematic  ", "cinematic"],
    ["cinematic style", "cinematic"],
    ["in the style of a movie still", "cinematic"],
    ["watercolor", "watercolour"],
    ["Watercolour", "watercolour"],
    ["water-colour", "watercolour"],
    ["watercolours", "watercolour"],
    ["3d", "3d-render"],
    ["3D", "3d-render"],
    ["3-D", "3d-render"],
    ["3D render", "3d-render"],
    ["film noir", "film-noir"],
    ["Film-Noir", "film-noir"],
    ["noir", "film-noir"],
    ["analogue", "analog-film"],
    ["pixelart", "pixel-art"],
    ["8-bit", "pixel-art"],
    ["low-poly", "low-poly"],
    ["lowpoly", "low-poly"],
    ["Neonpunk", "neon-punk"],
    ["cyberpunk", "neon-punk"],
    ["photo", "photographic"],
    ["comic book", "comic"],
    ["ukiyo e", "ukiyo-e"],
    ["cinematc", "cinematic"],
    ["watercolr", "watercolour"],
  ])("style %j is preset %s", (text, id) => {
    const match = matchStyle(text);
    expect(match.kind).toBe("preset");
    expect(understoodAs(match)).toBe(id);
  });

  it.each([
    ["Calm", "calm"],
    ["serene", "calm"],
    ["cosy", "cozy"],
    ["melancholy", "melancholic"],
    ["sombre", "melancholic"],
    ["spooky", "eerie"],
    ["majestic", "epic"],
    ["ethereal", "dreamy"],
  ])("mood %j is preset %s", (text, id) => {
    expect(understoodAs(matchMood(text))).toBe(id);
  });

  it("selects a preset named inside longer text and keeps the text as written", () => {
    const match = matchStyle("soft Watercolor with salt blooms");
    expect(match).toMatchObject({ kind: "contains", text: "soft Watercolor with salt blooms" });
    expect(match.kind === "contains" && match.preset.id).toBe("watercolour");
    expect(understoodAs(match)).toBe("soft Watercolor with salt blooms");
    expect(matchMood("bittersweet longing")).toMatchObject({ kind: "contains", text: "bittersweet longing" });
    // "film" inside "film noir" is not a second preset.
    expect(matchStyle("gritty film noir").kind).toBe("contains");
  });

  it("treats unknown text and text naming several presets as free text, kept as written", () => {
    expect(matchStyle("Kintsugi ceramics")).toEqual({ kind: "free", text: "Kintsugi ceramics" });
    expect(matchStyle("anime  meets   watercolor")).toEqual({ kind: "free", text: "anime meets watercolor" });
    expect(matchStyle("soft Watercolor and ink").kind).toBe("free");
    expect(matchMood("feverish anticipation")).toEqual({ kind: "free", text: "feverish anticipation" });
  });

  it("treats empty text as no style", () => {
    expect(matchStyle("")).toEqual({ kind: "none" });
    expect(matchMood("   ")).toEqual({ kind: "none" });
    expect(understoodAs(matchStyle(""))).toBe("");
  });
});
