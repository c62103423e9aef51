/**
 * Checks feeds against a model's declared inputs before they reach onnxruntime. A mismatch is a
 * programming error (a wrong catalog record or pre-processing step), so it is INTERNAL, but the message
 * names the model, the tensor and both shapes: onnxruntime's own errors name neither reliably.
 */
import { AtelierError } from "../../core/errors.js";
import { elementCount, feedElementType, FEED_ELEMENT_TYPES, formatShape, type FeedMap, type TensorSignature } from "./tensor-data.js";

function mismatch(modelKey: string, detail: string): AtelierError {
  return new AtelierError("INTERNAL", `Model "${modelKey}": ${detail}`);
}

/**
 * Throws an AtelierError INTERNAL when `feeds` lacks a declared input, carries an undeclared one, or
 * has a tensor whose element type, rank, fixed dimension or element count does not match. A symbolic
 * dimension used by several inputs (`"batch"`) must have one size across them.
 */
export function validateFeeds(modelKey: string, inputs: readonly TensorSignature[], feeds: FeedMap): void {
  const declared = new Set(inputs.map((input) => input.name));
  const unexpected = Object.keys(feeds).filter((name) => !declared.has(name));
  if (unexpected.length > 0) {
    throw mismatch(
      modelKey,
      `unexpected input tensor ${unexpected.map((n) => `"${n}"`).join(", ")}; the model's inputs are ${[...declared].map((n) => `"${n}"`).join(", ")}.`,
    );
  }
  const symbolSizes = new Map<string, { size: number; tensor: string }>();
  for (const input of inputs) {
    const feed = feeds[input.name];
    if (feed === undefined) {
      throw mismatch(modelKey, `missing input tensor "${input.name}" (expected shape ${formatShape(input.shape)}).`);
    }
    if (!(FEED_ELEMENT_TYPES as readonly string[]).includes(input.type)) {
      throw mismatch(modelKey, `input tensor "${input.name}" is ${input.type}; this runtime feeds ${FEED_ELEMENT_TYPES.join(", ")} only.`);
    }
    const fed = feedElementType(feed);
    if (fed !== input.type) {
      throw mismatch(modelKey, `input tensor "${input.name}" is ${input.type} but received ${fed}.`);
    }
    const expected = formatShape(input.shape);
    const received = formatShape(feed.dims);
    if (input.shape.length > 0 && feed.dims.length !== input.shape.length) {
      throw mismatch(
        modelKey,
        `expected rank ${input.shape.length} for input tensor "${input.name}" (shape ${expected}) but received rank ${feed.dims.length} (shape ${received}).`,
      );
    }
    feed.dims.forEach((size, axis) => {
      if (!Number.isInteger(size) || size < 0) {
        throw mismatch(modelKey, `input tensor "${input.name}" has an invalid dimension ${size} in shape ${received}.`);
      }
      const want = input.shape[axis];
      if (typeof want === "number" && want >= 0 && want !== size) {
        throw mismatch(
          modelKey,
          `expected shape ${expected} for input tensor "${input.name}" but received ${received} (axis ${axis}: ${want} expected, ${size} received).`,
        );
      }
      if (typeof want === "string" && want !== "") {
        const seen = symbolSizes.get(want);
        if (seen === undefined) symbolSizes.set(want, { size, tensor: input.name });
        else if (seen.size !== size) {
          throw mismatch(
            modelKey,
            `dimension "${want}" is ${seen.size} in input tensor "${seen.tensor}" but ${size} in "${input.name}" (shape ${received}); they must agree.`,
          );
        }
      }
    });
    const count = elementCount(feed.dims);
    if (feed.data.length !== count) {
      throw mismatch(
        modelKey,
        `input tensor "${input.name}" has ${feed.data.length} values but its shape ${received} needs ${count}.`,
      );
    }
  }
}
