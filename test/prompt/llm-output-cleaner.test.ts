/** Reducing chat-model answers to one prompt line. */
import { describe, expect, it } from "vitest";
import { cleanLlmOutput } from "../../workers/prompt/llm-output-cleaner.js";

const USER = "a cat on a roof";
const clean = (raw: string, userPrompt = USER) => cleanLlmOutput(raw, { userPrompt });

describe("LLM output cleaner", () => {
  it.each([
    ["a cat on a roof at dusk, soft light, detailed fur", "a cat on a roof at dusk, soft light, detailed fur"],
    ['"a cat on a roof at dusk, soft light"', "a cat on a roof at dusk, soft light"],
    ["“a cat on a roof, moonlit”", "a cat on a roof, moonlit"],
    ["'a cat on a roof, moonlit.'", "a cat on a roof, moonlit"],
    ["Here is an improved prompt: a cat on a roof, cinematic lighting", "a cat on a roof, cinematic lighting"],
    ["Sure! Here's your prompt:\n\na cat on a roof, warm glow, 35mm", "a cat on a roof, warm glow, 35mm"],
    ["**Prompt:** a cat on a roof, volumetric light", "a cat on a roof, volumetric light"],
    ["Improved prompt: *a cat on a roof*, dramatic sky", "a cat on a roof, dramatic sky"],
    ["```\na cat on a roof, rim light\n```", "a cat on a roof, rim light"],
    ["<think>The user wants a cat. I should add lighting.</think>\na cat on a roof, golden hour", "a cat on a roof, golden hour"],
    ["- a cat on a roof, starry night sky", "a cat on a roof, starry night sky"],
    ["  a   cat on a\troof,   soft   light  ", "a cat on a roof, soft light"],
  ])("%j → %j", (raw, expected) => {
    expect(clean(raw)).toBe(expected);
  });

  it("reduces multi-paragraph chatter with a preamble, notes and a negative prompt to the one prompt line", () => {
    const raw = [
      "Certainly! Below is an improved version of your prompt that adds atmosphere and detail.",
      "",
      "**Improved prompt:**",
      '"A cat on a roof at twilight, silhouetted against a glowing orange sky, soft rim light on its fur, cinematic composition, highly detailed"',
      "",
      "**Negative prompt:** blurry, low quality",
      "",
      "This version keeps your subject while adding lighting and composition cues. Let me know if you want a different style!",
    ].join("\n");
    expect(clean(raw)).toBe(
      "A cat on a roof at twilight, silhouetted against a glowing orange sky, soft rim light on its fur, cinematic composition, highly detailed",
    );
  });

  it("prefers the line that keeps the user's idea over other content", () => {
    const raw = "Style: watercolor\nMood: calm\n1. a watercolor cat on a red roof, calm evening\nTips: use a high step count.";
    expect(clean(raw)).toBe("a watercolor cat on a red roof, calm evening");
  });

  it("returns empty text when nothing usable is left", () => {
    expect(clean("")).toBe("");
    expect(clean("<think>hmm</think>")).toBe("");
    expect(clean("Sure! Let me know if you need anything else.")).toBe("");
  });
});
