/**
 * The models a fresh install fetches on first start so every operation works at once: all
 * permissively licensed, all pinned by checksum, about 30 MB together. First-start provisioning
 * (operations/provisioning/) installs them; a worker reads the list to tell a model on its way from
 * one that is missing.
 *
 * - lsdir-compact-x4 (CC-BY-4.0) and espcn-x3 (MIT): the AI upscalers (esrgan-* ship in npm packages).
 * - portrait-selfie (Apache-2.0), portrait-sinet (MIT): background removal for people. The general
 *   model, isnet-general, is AGPL-3.0 and comes with the optional npm package instead.
 * - mathura, matilde-perez, matta (MIT): styles whose weights may be used commercially.
 * - cvae-quickdraw (MIT): the doodle generator, the one text-to-image model small enough to fetch unasked.
 * - prompt-builtin (MIT): the prompt engine's term lists and CLIP merges.
 */
export const STARTER_MODELS = [
  "lsdir-compact-x4",
  "espcn-x3",
  "portrait-selfie",
  "portrait-sinet",
  "mathura",
  "matilde-perez",
  "matta",
  "cvae-quickdraw",
  "prompt-builtin",
] as const;
