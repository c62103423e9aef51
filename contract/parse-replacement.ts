/**
 * What the client's `replacement` text means, decided in a fixed order so the same text always means
 * the same thing:
 *
 * 1. empty or absent: no replacement, a transparent cutout;
 * 2. a CSS colour (`white`, `#0f08`, `rgb(0 128 255)`, `hsl(120 100% 25%)`, `transparent`): a solid fill;
 * 3. an `http(s)://` or `data:` URL: that image, cover-fitted;
 * 4. `blur`, or `blur(<sigma>px)` with sigma 1 to 100 source pixels: the original background, blurred;
 * 5. anything else: a description of a scene to generate.
 *
 * Colours come before descriptions, so a one-word description that is a colour name ("tomato",
 * "chocolate") is a colour; write "a tomato" for the scene.
 */
import { z } from "zod";
import { AtelierError } from "../core/errors.js";
import { hexOf, parseCssColor, type Rgba } from "./css-color.js";
import { LIMITS } from "../core/limits.js";

const URL_PREFIX = /^(https?:\/\/|data:)/i;

/** Longest `replacement` text in characters, except a URL (bounded as imageUrl is: length for http(s), body and image size for data:). */
export const MAX_REPLACEMENT_TEXT = LIMITS.replacementCharacters.max;

/**
 * The `replacement` field: text of up to {@link MAX_REPLACEMENT_TEXT} characters, or a URL whose
 * length the image source judges, so a replacement image travels exactly as an imageUrl does (the
 * same URL, size and format rules apply to both).
 */
export const replacementText = z
  .string({ error: "Expected string for replacement" })
  .refine((text) => text.length <= MAX_REPLACEMENT_TEXT || URL_PREFIX.test(text.trim()), {
    error: (issue) => `Expected replacement of at most ${MAX_REPLACEMENT_TEXT} characters (an image URL may be longer) but received ${(issue.input as string).length}`,
  });

/** Strongest blur accepted, in source pixels (Gaussian sigma). */
export const MAX_BLUR_SIGMA = LIMITS.blurSigma.max;

export type Replacement =
  | { kind: "none" }
  | ({ kind: "color" } & Rgba)
  | { kind: "image"; url: string }
  /** `sigma` in source pixels; undefined lets the worker pick one from the image size. */
  | { kind: "blur"; sigma: number | undefined }
  | { kind: "generate"; description: string };

const BLUR = /^blur(?:\s*\(\s*(\d+(?:\.\d+)?)\s*(?:px)?\s*\))?$/i;

function invalidReplacement(message: string): AtelierError {
  return new AtelierError("INVALID_INPUT", message, { issues: [{ path: "replacement", message }] });
}

export function parseReplacement(text: string | undefined): Replacement {
  const trimmed = (text ?? "").trim();
  if (trimmed === "") return { kind: "none" };
  const color = parseCssColor(trimmed);
  if (color) return { kind: "color", ...color };
  if (URL_PREFIX.test(trimmed)) return { kind: "image", url: trimmed };
  const blur = BLUR.exec(trimmed);
  if (blur) {
    if (blur[1] === undefined) return { kind: "blur", sigma: undefined };
    const sigma = Number(blur[1]);
    if (!(sigma >= LIMITS.blurSigma.min && sigma <= MAX_BLUR_SIGMA)) {
      throw invalidReplacement(`Expected a blur between ${LIMITS.blurSigma.min} and ${MAX_BLUR_SIGMA} px for replacement but received ${blur[1]} px`);
    }
    return { kind: "blur", sigma };
  }
  return { kind: "generate", description: trimmed };
}

/** How the replacement was understood, for the response: `none`, `color:#rrggbb[aa]`, `image`, `blur`, `blur:<sigma>`. */
export function describeReplacement(replacement: Replacement, generatedBy?: string): string {
  switch (replacement.kind) {
    case "none":
      return "none";
    case "color":
      return `color:${hexOf(replacement)}`;
    case "image":
      return "image";
    case "blur":
      return replacement.sigma === undefined ? "blur" : `blur:${replacement.sigma}`;
    case "generate":
      return `generated:${generatedBy ?? "?"}`;
  }
}
