/**
 * The relevance measure on a small corpus built for the purpose, where the right answers are known,
 * then a few checks on the real flavour list.
 */
import { describe, expect, it } from "vitest";
import { readModifierLists } from "../../workers/prompt/modifier-lists.js";
import { RelevanceIndex } from "../../workers/prompt/relevance-index.js";
import { hasModifierLists, MODIFIERS_FOLDER } from "./prompt-fixtures.js";

/**
 * Lighting lines share a learnt vocabulary; "fox" co-occurs with "fur" often, with "tail" once;
 * "highly" is common enough (50 lines) for "higly" to be recognised as its misspelling.
 */
function corpus(): string[] {
  const lines: string[] = [];
  for (let i = 0; i < 6; i++) lines.push("soft lighting", "dramatic lighting", "rim light", "volumetric lighting", "cinematic lighting");
  for (let i = 0; i < 4; i++) lines.push("golden hour light", "warm light", "studio lighting", "sharp focus", "intricate details");
  for (let i = 0; i < 50; i++) lines.push("highly detailed");
  for (let i = 0; i < 8; i++) lines.push("fox fur", "red fox fur", "fluffy fur", "fox in the forest", "forest path", "detailed fur", "fur texture");
  lines.push("fox tail", "red tail lights", "highly detailed", "higly detailed", "greg rutkowski lighting", "by john smith");
  for (let i = 0; i < 30; i++) lines.push(`filler line number ${i}`, `another filler ${i}`);
  return lines;
}

describe("relevance index on a known corpus", () => {
  const index = new RelevanceIndex(corpus(), ["Greg Rutkowski", "John Smith"]);

  it("associates words that share lines more than chance, weighted by support", () => {
    const assoc = index.associations({ terms: [{ key: "fox", weight: 1 }] });
    const fur = index.associationOf(assoc, "fur");
    const tail = index.associationOf(assoc, "tail");
    expect(fur).toBeGreaterThan(0);
    // "tail" shares one line with "fox": below the minimum support, no association.
    expect(tail).toBe(0);
    expect(index.associationOf(assoc, "lighting")).toBe(0);
    // "red" only ever appears with "fox" here, so it is associated even more strongly than "fur".
    expect(index.topAssociations(assoc, 2).map((entry) => entry.key)).toEqual(["red", "fur"]);
  });

  it("offers a quality line with a subject feature only when the feature goes with the subject", () => {
    const subject = index.associations({ terms: [{ key: "fox", weight: 1.5 }] });
    const none = new Map<number, number>();
    const withFox = index.rank("quality", none, subject, 10, () => true).map((candidate) => candidate.text);
    expect(withFox).toContain("detailed fur");
    const withoutFox = index.rank("quality", none, none, 10, () => true).map((candidate) => candidate.text);
    expect(withoutFox).not.toContain("detailed fur");
    expect(withoutFox).toContain("highly detailed");
    expect(new Set(withoutFox).size).toBe(withoutFox.length);
  });

  it("keeps lighting lines to the lighting vocabulary", () => {
    const subject = index.associations({ terms: [{ key: "fox", weight: 1.5 }] });
    const lighting = index.rank("lighting", new Map(), subject, 20, () => true).map((candidate) => candidate.text);
    expect(lighting).toContain("soft lighting");
    expect(lighting).not.toContain("red tail lights");
  });

  it("never offers names, credits or misspellings", () => {
    const all = ["lighting", "composition", "quality"].flatMap((kind) =>
      index.rank(kind as "lighting", new Map(), new Map(), 100, () => true).map((candidate) => candidate.text),
    );
    expect(all).not.toContain("greg rutkowski lighting");
    expect(all).not.toContain("by john smith");
    expect(all).not.toContain("higly detailed");
    expect(index.stats.misspellings).toBeGreaterThanOrEqual(1);
  });

  it("ranks by popularity when nothing else differs", () => {
    const lighting = index.rank("lighting", new Map(), new Map(), 3, () => true).map((candidate) => candidate.text);
    expect(lighting[0]).toBe("soft lighting");
    const refused = index.rank("lighting", new Map(), new Map(), 3, (candidate) => candidate.text !== "soft lighting").map((candidate) => candidate.text);
    expect(refused[0]).toBe("dramatic lighting");
  });
});

describe.skipIf(!hasModifierLists)("relevance index on the flavour list", () => {
  const lists = readModifierLists(MODIFIERS_FOLDER)!;
  const index = new RelevanceIndex(lists.flavors, lists.artists);

  it("indexes every line and learns the detail vocabulary", () => {
    expect(index.stats.lines).toBe(lists.flavors.length);
    expect(index.stats.offerable).toBeGreaterThan(5000);
    expect(index.stats.vocabulary).toBeGreaterThan(20_000);
  });

  it("finds a subject's features: a fox's fur, a dragon's claws or scales", () => {
    const fox = index.associations({ terms: [{ key: "fox", weight: 1.5 }] });
    index.addAssociation(fox, "fur", 0.3);
    expect(index.rank("quality", new Map(), fox, 40, () => true).some((candidate) => candidate.feature === "fur")).toBe(true);
    const dragon = index.associations({ terms: [{ key: "dragon", weight: 1.5 }] });
    expect(index.rank("quality", new Map(), dragon, 40, () => true).some((candidate) => ["claw", "scale"].includes(candidate.feature ?? ""))).toBe(true);
  });

  it("steers lighting by the topic: cinematic, portrait and cozy queries lead to different lines", () => {
    const top = (keys: string[]) =>
      index
        .rank("lighting", index.associations({ terms: keys.map((key) => ({ key, weight: 0.4 })) }), new Map(), 5, () => true)
        .map((candidate) => candidate.text)
        .join(" | ");
    const results = new Set([top(["cinematic"]), top(["interior", "room"]), top(["cozy", "warm"]), top([])]);
    expect(results.size).toBeGreaterThanOrEqual(3);
  });
});
