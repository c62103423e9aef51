/**
 * CLIP token counting. The exact tokenizer is pinned to reference ids published from Hugging Face
 * transformers' `openai/clip-vit-base-patch32` tokenizer and open_clip's SimpleTokenizer (not
 * produced by this code); the estimate used without the merge list must not under-count.
 */
import fs from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { ApproximateClipCounter, APPROXIMATE_MARGIN, ExactClipCounter } from "../../workers/prompt/clip-tokens.js";
import { MOOD_PRESETS } from "../../models/catalog/prompt-presets/mood-presets.js";
import { STYLE_PRESETS } from "../../models/catalog/prompt-presets/style-presets.js";
import { mirrorPath } from "../support/test-assets.js";
import { CLIP_MERGES_FILE, hasClipVocabulary, hasModifierLists } from "./prompt-fixtures.js";

describe.skipIf(!hasClipVocabulary)("exact CLIP BPE", () => {
  let tokenizer: ExactClipCounter;
  beforeAll(() => {
    tokenizer = ExactClipCounter.fromMergesFile(CLIP_MERGES_FILE);
  });

  it.each([
    ["a photo of a cat", [49406, 320, 1125, 539, 320, 2368, 49407]],
    ["a diagram", [49406, 320, 22697, 49407]],
    ["a dog", [49406, 320, 1929, 49407]],
    ["a photo of a waterfall", [49406, 320, 1125, 539, 320, 16403, 49407]],
    ["dog on a beach", [49406, 1929, 525, 320, 2117, 49407]],
    ["mobileclip", [49406, 9451, 944, 8546, 49407]],
    ["hatbox", [49406, 3447, 2063, 49407]],
    ["hat box", [49406, 3801, 2063, 49407]],
    ["Hello,   WORLD!", [49406, 3306, 267, 1002, 256, 49407]],
    ["birthday cake 2024", [49406, 1166, 2972, 273, 271, 273, 275, 49407]],
    ["café", [49406, 15304, 49407]],
    ["🐶", [49406, 10631, 49407]],
    ["", [49406, 49407]],
    ["I can't believe it's not butter", [49406, 328, 753, 713, 2649, 585, 568, 783, 6952, 49407]],
    ["MacBook Pro 16-inch", [49406, 20617, 2630, 272, 277, 268, 6523, 49407]],
    ["email: user@example.com", [49406, 4462, 281, 7031, 287, 6228, 269, 2464, 49407]],
  ])("encodes %j like the reference", (text, ids) => {
    expect([tokenizer.tokenizer.startId, ...tokenizer.tokenizer.encodeText(text), tokenizer.tokenizer.endId]).toEqual(ids);
    expect(tokenizer.count(text)).toBe(ids.length - 2);
  });

  it("the estimate does not under-count the engine's own vocabulary", () => {
    const estimate = new ApproximateClipCounter();
    const terms = [
      ...STYLE_PRESETS.flatMap((style) => [style.lead, ...style.terms, ...style.negative]),
      ...MOOD_PRESETS.flatMap((mood) => [...mood.lighting, ...mood.color, ...mood.atmosphere, ...mood.negative]),
    ];
    for (const term of terms) expect(estimate.count(term), term).toBeGreaterThanOrEqual(tokenizer.count(term));
    const joined = terms.join(", ");
    expect(estimate.count(joined)).toBeGreaterThan(tokenizer.count(joined));
  });

  it.skipIf(!hasModifierLists)("the estimate, with its margin, covers whole prompts of flavour lines", () => {
    const estimate = new ApproximateClipCounter();
    const lines = fs.readFileSync(mirrorPath("prompt-modifiers", "flavors.txt"), "utf8").split("\n").filter(Boolean);
    let short = 0;
    let groups = 0;
    for (let i = 0; i + 6 <= lines.length; i += 6) {
      const prompt = lines.slice(i, i + 6).join(", ");
      const exact = tokenizer.count(prompt);
      const estimated = estimate.count(prompt);
      groups++;
      if (estimated < exact) {
        short++;
        // The engine keeps APPROXIMATE_MARGIN of the budget free: a shortfall within it still fits.
        expect(exact - estimated, prompt).toBeLessThanOrEqual(Math.ceil(exact * APPROXIMATE_MARGIN));
      }
    }
    // Falls short on a handful of the 16,828 six-line prompts.
    expect(short / groups).toBeLessThan(0.001);
  });
});

describe("approximate counter", () => {
  it("counts letters in runs of three, and every digit and symbol", () => {
    const estimate = new ApproximateClipCounter();
    expect(estimate.count("a cat")).toBe(2);
    expect(estimate.count("photograph")).toBe(4);
    expect(estimate.count("8k, 35mm")).toBe(1 + 1 + 1 + 1 + 1 + 1);
    expect(estimate.count("")).toBe(0);
  });
});
