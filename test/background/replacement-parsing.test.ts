/** How the router reads `replacement`: colours, URLs, blur, descriptions, in that order. */
import { describe, expect, it } from "vitest";
import { AtelierError } from "../../core/errors.js";
import type { ModelRecord } from "../../gen/atelier/catalog/v1/catalog_service.js";
import { GENERATION_OPTIONS } from "../../models/catalog/catalog-types.js";
import { describeReplacement, generationSize, parseReplacement } from "../../server/background/index.js";

describe("parseReplacement", () => {
  it.each([
    // [text, understood as]
    [undefined, "none"],
    ["", "none"],
    ["   ", "none"],
    // CSS colours: keywords, hex 3/4/6/8, rgb(), rgba(), hsl(), hsla(), hwb(), transparent.
    ["white", "color:#ffffff"],
    ["White", "color:#ffffff"],
    ["rebeccapurple", "color:#663399"],
    ["tomato", "color:#ff6347"],
    ["#0f0", "color:#00ff00"],
    ["#0f08", "color:#00ff0088"],
    ["#00ff00", "color:#00ff00"],
    ["#00ff0080", "color:#00ff0080"],
    ["  #ABCDEF  ", "color:#abcdef"],
    ["rgb(10, 20, 30)", "color:#0a141e"],
    ["rgb(10 20 30)", "color:#0a141e"],
    ["rgba(10, 20, 30, 0.5)", "color:#0a141e80"],
    ["rgb(10 20 30 / 50%)", "color:#0a141e80"],
    ["hsl(120, 100%, 50%)", "color:#00ff00"],
    ["hsl(120deg 100% 25%)", "color:#008000"],
    ["hsla(240, 100%, 50%, 0.25)", "color:#0000ff40"],
    ["hsl(0, 0%, 100%)", "color:#ffffff"],
    ["hwb(0 0% 0%)", "color:#ff0000"],
    ["hwb(0 50% 50%)", "color:#808080"],
    ["transparent", "color:#00000000"],
    // Images.
    ["https://example.com/beach.jpg", "image"],
    ["HTTP://example.com/beach", "image"],
    ["data:image/png;base64,iVBORw0KGgo=", "image"],
    // Blur.
    ["blur", "blur"],
    ["BLUR", "blur"],
    ["blur(12px)", "blur:12"],
    ["blur( 2.5 )", "blur:2.5"],
    // Descriptions: anything else.
    ["a sunny beach at golden hour", "generated:?"],
    ["blurry city street at night", "generated:?"],
    ["#12345", "generated:?"],
    ["ftp://example.com/a.png", "generated:?"],
    ["a tomato", "generated:?"],
  ])("%j is understood as %s", (text, understood) => {
    expect(describeReplacement(parseReplacement(text))).toBe(understood);
  });

  it("keeps the values the worker needs", () => {
    expect(parseReplacement("rgba(255, 0, 0, 0.5)")).toEqual({ kind: "color", red: 255, green: 0, blue: 0, alpha: 0.5 });
    expect(parseReplacement("transparent")).toEqual({ kind: "color", red: 0, green: 0, blue: 0, alpha: 0 });
    expect(parseReplacement(" https://example.com/x.png ")).toEqual({ kind: "image", url: "https://example.com/x.png" });
    expect(parseReplacement("blur")).toEqual({ kind: "blur", sigma: undefined });
    expect(parseReplacement("blur(40px)")).toEqual({ kind: "blur", sigma: 40 });
    expect(parseReplacement("  a misty forest  ")).toEqual({ kind: "generate", description: "a misty forest" });
    expect(describeReplacement(parseReplacement("a misty forest"), "sd-turbo")).toBe("generated:sd-turbo");
  });

  it.each(["blur(0px)", "blur(0.5)", "blur(101px)"])("refuses %s with a sentence naming the range", (text) => {
    let caught: unknown;
    try {
      parseReplacement(text);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(AtelierError);
    expect((caught as AtelierError).code).toBe("INVALID_INPUT");
    expect((caught as AtelierError).message).toMatch(/^Expected a blur between 1 and 100 px for replacement but received [\d.]+ px$/);
    expect((caught as AtelierError).issues?.[0]?.path).toBe("replacement");
  });
});

describe("generationSize", () => {
  const model = {
    id: "sd",
    generation: { defaultWidth: 512, defaultHeight: 512, minSize: 256, maxWidth: 1024, maxHeight: 1024, sizeMultiple: 64, options: [...GENERATION_OPTIONS] },
  } as ModelRecord;

  it("asks for the source's size within the model's bounds, aspect kept, on its size multiple", () => {
    expect(generationSize({ width: 768, height: 512 }, model)).toEqual({ width: 768, height: 512 });
    expect(generationSize({ width: 4000, height: 3000 }, model)).toEqual({ width: 1024, height: 768 });
    expect(generationSize({ width: 3000, height: 4000 }, model)).toEqual({ width: 768, height: 1024 });
    expect(generationSize({ width: 100, height: 80 }, model)).toEqual({ width: 256, height: 256 });
    expect(generationSize(undefined, model)).toEqual({ width: 512, height: 512 });
  });
});
