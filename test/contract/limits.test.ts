/**
 * The proto comments tell gRPC callers the same bounds as core/limits.ts: each field's comment
 * states the numbers of its entry, so changing a limit without its comment fails here.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { LIMITS, type Bounds } from "../../core/limits.js";

const PROTO = path.join(import.meta.dirname, "../../proto/atelier");

/** The comment lines right above `field` in `message`. */
function commentOf(file: string, message: string, field: string): string {
  const text = fs.readFileSync(path.join(PROTO, file), "utf8");
  const body = text.slice(text.indexOf(`message ${message} {`));
  const lines = body.slice(0, body.indexOf("\n}")).split("\n");
  const at = lines.findIndex((line) => new RegExp(`^\\s*(optional |repeated )?[\\w.]+ ${field} = \\d+;`).test(line));
  expect(at, `${message}.${field} in ${file}`).toBeGreaterThan(0);
  const comment: string[] = [];
  for (let index = at - 1; index >= 0 && /^\s*\/\//.test(lines[index]!); index -= 1) comment.unshift(lines[index]!.replace(/^\s*\/\/\s?/, ""));
  return comment.join(" ");
}

const range = ({ min, max }: Bounds) => `${min} to ${max}`;

const FIELDS: [file: string, message: string, field: string, says: string][] = [
  ["generation/v1/generation_service.proto", "GenerateRequest", "prompt", `${range(LIMITS.promptCharacters)} characters`],
  ["generation/v1/generation_service.proto", "GenerateRequest", "negative_prompt", `at most ${LIMITS.negativePromptCharacters.max} characters`],
  ["generation/v1/generation_service.proto", "GenerateRequest", "steps", range(LIMITS.steps)],
  ["generation/v1/generation_service.proto", "GenerateRequest", "guidance_scale", range(LIMITS.guidanceScale)],
  ["generation/v1/generation_service.proto", "GenerateRequest", "seed", `${LIMITS.seed.min} to 2^32-1`],
  ["upscale/v1/upscale_service.proto", "UpscaleRequest", "scale", range(LIMITS.upscaleScale)],
  ["style/v1/style_transfer_service.proto", "StyleTransferRequest", "strength", `${LIMITS.styleStrength.min} (original) to ${LIMITS.styleStrength.max} (full style)`],
  ["prompt/v1/prompt_service.proto", "ImprovePromptRequest", "prompt", `${range(LIMITS.promptCharacters)} characters`],
  ["prompt/v1/prompt_service.proto", "ImprovePromptRequest", "variants", range(LIMITS.promptVariants)],
  ["prompt/v1/prompt_service.proto", "ImprovePromptRequest", "max_tokens", range(LIMITS.promptTokens)],
  ["background/v1/background_service.proto", "Blur", "sigma", range(LIMITS.blurSigma)],
];

describe("proto comments state the limits of core/limits.ts", () => {
  it("reads 2^32-1 as the seed limit", () => {
    expect(LIMITS.seed.max).toBe(2 ** 32 - 1);
  });
  it.each(FIELDS)("%s %s.%s says %s", (file, message, field, says) => {
    expect(commentOf(file, message, field)).toContain(says);
  });
});
