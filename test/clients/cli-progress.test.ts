/** The CLI's progress line: a bar with the percentage and stage on a terminal, one summary line elsewhere. */
import { describe, expect, it } from "vitest";
import { Progress } from "../../clients/typescript/src/cli/progress.js";

function capture(isTTY: boolean) {
  const chunks: string[] = [];
  return { stream: { isTTY, write: (chunk: string) => chunks.push(chunk) > 0 }, text: () => chunks.join("") };
}

describe("CLI progress", () => {
  it("draws a bar with percentage and stage on a terminal, then clears it for the outcome", () => {
    const terminal = capture(true);
    const progress = new Progress("Generating", terminal.stream).start();
    progress.update(0.5, "denoising");
    progress.stop("256x256 image/png");
    const text = terminal.text();
    expect(text).toContain("Generating [############------------] 50% denoising");
    expect(text).toMatch(/\r\x1b\[2K256x256 image\/png \(\d+\.\d s\)\n$/);
  });

  it("writes only the outcome when stderr is not a terminal", () => {
    const pipe = capture(false);
    const progress = new Progress("Upscaling", pipe.stream).start();
    progress.update(0.25, "tiles");
    progress.stop("96x64 image/png");
    expect(pipe.text()).toMatch(/^96x64 image\/png \(\d+\.\d s\)\n$/);
  });
});
