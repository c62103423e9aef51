/** OpenAI's CLIP BPE merges (MIT): the tokenizer of SD 1.x/2.x text encoders, and the prompt engine's token counter. */
import type { WeightFile } from "../catalog-types.js";

export const CLIP_MERGES_FILE: WeightFile = {
  name: "clip/bpe_simple_vocab_16e6.txt.gz",
  origin: {
    url: "https://raw.githubusercontent.com/openai/CLIP/d05afc436d78f1c48dc0dbf8e5980a9d471f35f6/clip/bpe_simple_vocab_16e6.txt.gz",
    mirror: "clip-bpe-vocab/bpe_simple_vocab_16e6.txt.gz",
  },
  sha256: "924691ac288e54409236115652ad4aa250f48203de50a9e4722a6ecd48d6804a",
  size: 1356917,
};
