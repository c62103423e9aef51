/**
 * Every `curl` command of README.md, run as printed by the real curl (through bash, with `$KEY` set
 * to a real key) against a real server with the models the README says to pull. Only the origin
 * changes: the README's http://127.0.0.1:8080 becomes the test server's ephemeral port.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installedModelsDir } from "../support/installed-models.js";
import { hasMirrorModel } from "../support/test-assets.js";
import { startTestService, type TestService } from "../support/test-service.js";

const README = path.join(import.meta.dirname, "../../README.md");
const README_ORIGIN = "http://127.0.0.1:8080";
const available = ["cvae-quickdraw", "style-fast-ml5", "portrait-seg-mediapipe-selfie"].every((folder) => hasMirrorModel(folder));

/** The `curl` commands of the README's shell blocks, continuation lines joined. */
function curlCommands(markdown: string): string[] {
  const blocks = [...markdown.matchAll(/```(?:sh|bash|shell)\n([\s\S]*?)```/g)].map((match) => match[1]!);
  return blocks.flatMap((block) =>
    block
      .replace(/\\\n\s*/g, " ")
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line.startsWith("curl ")),
  );
}

let service: TestService;
let key: string;

beforeAll(async () => {
  if (!available) return;
  service = await startTestService({ ATELIER_MODELS_DIR: await installedModelsDir(["cvae-quickdraw", "mathura", "portrait-selfie"]) });
  key = await service.createKey("readme");
}, 300_000);
afterAll(async () => {
  await service?.close();
});

describe.runIf(available)("README curl examples", () => {
  const commands = curlCommands(fs.readFileSync(README, "utf8"));

  it("finds the examples, each aimed at the documented origin", () => {
    expect(commands.length).toBeGreaterThanOrEqual(7);
    for (const command of commands) expect(command).toContain(README_ORIGIN);
  });

  it.each(commands.map((command) => [command.slice(0, 90), command]))("runs %s… and succeeds", async (_label, command) => {
    const printed = command.replaceAll(README_ORIGIN, service.url);
    // The status goes on a last line of its own; the command itself is untouched.
    const { stdout } = await promisify(execFile)("bash", ["-c", `${printed} -w '\\n%{http_code}'`], {
      env: { ...process.env, KEY: key },
      maxBuffer: 64 * 1024 * 1024,
      timeout: 120_000,
    });
    const status = stdout.slice(stdout.lastIndexOf("\n") + 1);
    const body = stdout.slice(0, stdout.lastIndexOf("\n"));
    expect(status, body.slice(0, 500)).toBe("200");
    expect(JSON.parse(body)).toBeTypeOf("object");
  }, 180_000);
});
