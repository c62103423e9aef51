/** Prompt → Quick, Draw! class: plurals, synonyms, multi-word names, case, punctuation, choice. */
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { DOODLE_SYNONYMS } from "../../workers/generation/doodle/doodle-synonyms.js";
import { DoodleVocabulary } from "../../workers/generation/doodle/doodle-prompt.js";
import { hasMirrorModel, mirrorPath } from "../support/test-assets.js";
import { QUICKDRAW_LABELS } from "./doodle-labels.js";

const vocabulary = new DoodleVocabulary(QUICKDRAW_LABELS);

describe("reading a prompt as a doodle class", () => {
  it.each([
    // Class names, case and punctuation.
    ["apple", "apple"],
    ["An APPLE!", "apple"],
    ["owl.", "owl"],
    ["  Mushroom?? ", "mushroom"],
    ["a drawing of an anvil, please", "anvil"],
    // Plurals, regular and irregular.
    ["two owls", "owl"],
    ["Apples, please.", "apple"],
    ["knives", "knife"],
    ["three mice", "mouse"],
    ["a pile of leaves", "leaf"],
    ["octopi", "octopus"],
    ["octopuses", "octopus"],
    ["mosquitoes", "mosquito"],
    ["axes", "axe"],
    ["a pair of pants", "pants"],
    ["the lions' den", "lion"],
    ["an owl's nest", "owl"],
    // Multi-word names, hyphenated and joined spellings.
    ["ice cream", "ice_cream"],
    ["ice-cream", "ice_cream"],
    ["Ice Cream Cones", "ice_cream"],
    ["icecream", "ice_cream"],
    ["light bulb", "light_bulb"],
    ["lightbulb", "light_bulb"],
    ["two light bulbs", "light_bulb"],
    ["paper clips", "paper_clip"],
    ["a paperclip", "paper_clip"],
    ["an alarm clock", "alarm_clock"],
    ["alarm-clocks", "alarm_clock"],
    ["a red pickup truck", "pickup_truck"],
    ["a microwave oven", "microwave"],
    // Synonyms.
    ["a plane", "airplane"],
    ["an aeroplane", "airplane"],
    ["jets", "airplane"],
    ["a truck", "pickup_truck"],
    ["a bike", "motorbike"],
    ["motorcycles", "motorbike"],
    ["a cup of tea", "mug"],
    ["the sea", "ocean"],
    ["trousers", "pants"],
    ["jeans", "pants"],
    ["a prison", "jail"],
    ["a coat", "jacket"],
    ["a clock", "alarm_clock"],
    ["a toadstool", "mushroom"],
    ["a bullhorn", "megaphone"],
    ["a mic", "microphone"],
    ["a computer mouse", "mouse"],
    // Several classes: the first strong mention wins; loose words only when nothing else is named.
    ["an owl in the moonlight", "owl"],
    ["a moon over the ocean", "moon"],
    ["a lamp next to an owl", "owl"],
    ["a lamp", "light_bulb"],
    ["moonlight", "moon"],
    ["pick up the apple", "apple"],
    ["a key on a keyboard", "key"],
    ["lighters and lightning", "lighter"],
    ["lightning over the mountains", "lightning"],
  ])("%j → %s", (prompt, label) => {
    const match = vocabulary.read(prompt);
    expect(match?.label).toBe(label);
    expect(match?.index).toBe(QUICKDRAW_LABELS.indexOf(label));
  });

  it.each([["two cats"], ["a cat"], ["a flying pig"], ["light"], ["a sunset"], ["!!!"], ["car"]])("%j names no class", (prompt) => {
    expect(vocabulary.read(prompt)).toBeUndefined();
  });

  it("reports the words as written and how they matched", () => {
    expect(vocabulary.read("Two Ice-Creams!")).toMatchObject({ label: "ice_cream", matched: "Ice-Creams", kind: "name" });
    expect(vocabulary.read("a LIGHTBULB")).toMatchObject({ label: "light_bulb", matched: "LIGHTBULB", kind: "synonym" });
    expect(vocabulary.read("moonlit")).toMatchObject({ label: "moon", kind: "related" });
  });

  it("never reads a class inside another word", () => {
    expect(vocabulary.read("keyboards")?.label).toBe("keyboard");
    expect(vocabulary.read("lipsticks")?.label).toBe("lipstick");
    expect(vocabulary.read("an antelope")).toBeUndefined();
    expect(vocabulary.read("pantsuit")).toBeUndefined();
  });

  it("ignores synonyms of classes the model lacks", () => {
    const small = new DoodleVocabulary(["apple", "owl"]);
    expect(small.read("a plane")).toBeUndefined();
    expect(small.read("owls")).toMatchObject({ label: "owl", index: 1 });
  });
});

describe("the synonym table", () => {
  it("only names classes of the model", () => {
    for (const label of Object.keys(DOODLE_SYNONYMS)) expect(QUICKDRAW_LABELS, label).toContain(label);
  });

  it("reads every class from its own name, in both spellings", () => {
    for (const label of QUICKDRAW_LABELS) {
      expect(vocabulary.read(label)?.label, label).toBe(label);
      expect(vocabulary.read(DoodleVocabulary.displayName(label).toUpperCase())?.label, label).toBe(label);
    }
  });

  it("reads every listed synonym as its own class", () => {
    for (const [label, words] of Object.entries(DOODLE_SYNONYMS)) {
      for (const word of [...(words.strong ?? []), ...(words.loose ?? [])]) expect(vocabulary.read(word)?.label, word).toBe(label);
    }
  });
});

describe.skipIf(!hasMirrorModel("cvae-quickdraw"))("the labels used by these tests", () => {
  it("are the model's manifest labels, in order", () => {
    const manifest = JSON.parse(fs.readFileSync(mirrorPath("cvae-quickdraw", "manifest.json"), "utf8")) as { labels: string[] };
    expect(manifest.labels).toEqual(QUICKDRAW_LABELS);
  });
});
