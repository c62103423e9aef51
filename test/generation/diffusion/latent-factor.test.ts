/**
 * The latent factor a diffusion export implies: diffusers' rule on the VAE config's
 * block_out_channels, Stable Diffusion's 8 when the config does not say, 1 for a pixel-space model.
 */
import { describe, expect, it } from "vitest";
import { LATENT_FACTOR, latentFactor } from "../../../workers/generation/diffusion/latent-factor.js";

describe("latent factor from vae_decoder/config.json", () => {
  it("is 2^(levels - 1): 8 for SD's four-level VAE, 1 for a pixel-space model's single level", () => {
    expect(latentFactor({ block_out_channels: [128, 256, 512, 512], scaling_factor: 0.18215 })).toBe(8);
    expect(latentFactor({ block_out_channels: [64, 128] })).toBe(2);
    expect(latentFactor({ block_out_channels: [3], scaling_factor: 1 })).toBe(1);
  });

  it("is Stable Diffusion's 8 when there is no config or it does not say", () => {
    expect(LATENT_FACTOR).toBe(8);
    expect(latentFactor(undefined)).toBe(8);
    expect(latentFactor({ scaling_factor: 0.18215 })).toBe(8);
  });

  it("refuses a config no VAE has", () => {
    expect(() => latentFactor({ block_out_channels: [] })).toThrow(/block_out_channels/);
    expect(() => latentFactor({ block_out_channels: "128,256" })).toThrow(/block_out_channels/);
    expect(() => latentFactor({ block_out_channels: new Array(9).fill(64) })).toThrow(/block_out_channels/);
  });
});
