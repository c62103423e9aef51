/**
 * The folder layout of a Stable Diffusion ONNX export as Hugging Face Optimum
 * (`optimum-cli export onnx --model … DIR`) and diffusers' ONNX conversion script write it, which is
 * also how an installed model folder looks:
 *
 *   text_encoder/model.onnx      input_ids int32 [batch, 77] → last_hidden_state [batch, 77, 768|1024]
 *   unet/model.onnx              sample [batch, 4, h/8, w/8], timestep, encoder_hidden_states (+ timestep_cond) → out_sample
 *   vae_decoder/model.onnx       latent_sample [batch, 4, h/8, w/8] → sample [batch, 3, h, w]
 *   tokenizer/vocab.json, merges.txt, tokenizer_config.json, special_tokens_map.json
 *   scheduler/scheduler_config.json
 *   unet/config.json, vae_decoder/config.json (optional: time_cond_proj_dim, scaling_factor)
 *
 * Models without a tokenizer folder use OpenAI's CLIP merges file at `clip/` (pinned in the catalog).
 */
import fs from "node:fs/promises";
import type { GraphSource } from "./catalog-types.js";

/** Graph names in the catalog's `graphs` record, and the runtime's session keys. */
export const DIFFUSION_GRAPHS = { textEncoder: "text_encoder", unet: "unet", vaeDecoder: "vae_decoder" } as const;

export const EXPORT_FILES = {
  textEncoder: "text_encoder/model.onnx",
  unet: "unet/model.onnx",
  vaeDecoder: "vae_decoder/model.onnx",
  tokenizerFolder: "tokenizer",
  schedulerConfig: "scheduler/scheduler_config.json",
  unetConfig: "unet/config.json",
  vaeConfig: "vae_decoder/config.json",
  modelIndex: "model_index.json",
  /** OpenAI's merges file, for exports without `tokenizer/`. */
  clipMerges: "clip/bpe_simple_vocab_16e6.txt.gz",
} as const;

/** The catalog `graphs` of every diffusion export. */
export const DIFFUSION_GRAPH_SOURCES: Record<string, GraphSource> = {
  [DIFFUSION_GRAPHS.textEncoder]: { onnx: EXPORT_FILES.textEncoder },
  [DIFFUSION_GRAPHS.unet]: { onnx: EXPORT_FILES.unet },
  [DIFFUSION_GRAPHS.vaeDecoder]: { onnx: EXPORT_FILES.vaeDecoder },
};

/** SD's latent scale: latents are the VAE encoder's output times this (1/0.18215 undoes it). */
export const DEFAULT_VAE_SCALING_FACTOR = 0.18215;

/** A JSON object file, or undefined when the file does not exist. */
export async function readJsonObject(file: string): Promise<Record<string, unknown> | undefined> {
  let text: string;
  try {
    text = await fs.readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const parsed: unknown = JSON.parse(text);
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error(`${file} is not a JSON object`);
  return parsed as Record<string, unknown>;
}

/** The names of `files` (relative to `folder`) that do not exist. */
export async function missingFiles(folder: string, files: readonly string[]): Promise<string[]> {
  const missing: string[] = [];
  for (const file of files) {
    try {
      await fs.access(`${folder}/${file}`);
    } catch {
      missing.push(file);
    }
  }
  return missing;
}
