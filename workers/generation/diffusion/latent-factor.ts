/**
 * Pixels per latent cell along each side of a diffusion export, as diffusers derives its
 * `vae_scale_factor` from the VAE's config: 2^(levels − 1) for `block_out_channels` of that many
 * levels. Stable Diffusion's VAE has four levels (8); a pixel-space model (Atelier's own, trained in
 * training/atelier_training/t2i/) says one level, so its "latents" are the RGB pixels themselves and
 * its VAE decoder only clamps them.
 */

/** Stable Diffusion's factor, and the one assumed when `vae_decoder/config.json` does not say. */
export const LATENT_FACTOR = 8;

/** The factor `vae_decoder/config.json` implies; throws on a config no VAE has. */
export function latentFactor(vaeConfig: Record<string, unknown> | undefined): number {
  const levels = vaeConfig?.block_out_channels;
  if (levels === undefined) return LATENT_FACTOR;
  if (!Array.isArray(levels) || levels.length < 1 || levels.length > 8) {
    throw new Error(`vae_decoder/config.json: expected a list of 1 to 8 block_out_channels but received ${JSON.stringify(levels)}`);
  }
  return 2 ** (levels.length - 1);
}
