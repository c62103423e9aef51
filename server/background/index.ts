/** Background replacement in the router: what `replacement` means, and the bytes the worker gets for it. */
export { hexOf, parseCssColor, type Rgba } from "../../contract/css-color.js";
export { describeReplacement, MAX_BLUR_SIGMA, MAX_REPLACEMENT_TEXT, parseReplacement, replacementText, type Replacement } from "../../contract/parse-replacement.js";
export { BACKGROUND_NEGATIVE_PROMPT, generationSize, photographicGenerator, resolveReplacement, type ResolvedReplacement } from "./replacement-source.js";
