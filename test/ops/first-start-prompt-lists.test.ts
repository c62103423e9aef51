/**
 * A fresh `npm start` logs what is true about the prompt engine's term lists and CLIP merges
 * (prompt-builtin): while first-start provisioning is about to install them, one line saying they
 * are on their way and no warning with an install command; with provisioning off, or once it failed
 * to install them, the warning with `npm run models -- pull prompt-builtin`.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { LISTS_ARRIVING_NOTE, MODIFIER_LISTS_MISSING_NOTE } from "../../workers/prompt/builtin-engine.js";
import { mainProcessEnv, startMainProcess, type MainProcess } from "../support/main-process.js";
import { hasMirrorModel, modelMirror } from "../support/test-assets.js";

const MERGES_MISSING = "CLIP merge list not found";
const folders: string[] = [];
const running: MainProcess[] = [];

afterAll(async () => {
  for (const service of running) {
    service.child.kill("SIGTERM");
    await service.exited;
  }
  for (const folder of folders) fs.rmSync(folder, { recursive: true, force: true });
});

function folder(name: string): string {
  const made = fs.mkdtempSync(path.join(os.tmpdir(), `atelier-${name}-`));
  folders.push(made);
  return made;
}

/** A mirror holding only `modelFolders` of the real one (the other starter models fail to install at once). */
function mirrorOf(...modelFolders: string[]): string {
  const mirror = folder("mirror");
  for (const name of modelFolders) fs.symlinkSync(path.join(modelMirror, name), path.join(mirror, name));
  return mirror;
}

async function start(settings: Record<string, string>): Promise<{ service: MainProcess; dataDir: string }> {
  const dataDir = folder("first-start");
  const service = await startMainProcess(mainProcessEnv(dataDir, settings));
  running.push(service);
  return { service, dataDir };
}

/** Resolves once a line of the output matches; the liveness deadline is the test's. */
async function lineMatching(service: MainProcess, pattern: RegExp): Promise<string> {
  for (;;) {
    const line = service.output.find((candidate) => pattern.test(candidate));
    if (line) return line;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const messages = (service: MainProcess) => service.output.map((line) => (line.startsWith("{") ? ((JSON.parse(line) as { msg?: string }).msg ?? "") : line));

describe.concurrent("the prompt lists on a fresh start", () => {
  it("are said to be on their way, without a warning, while provisioning installs them", { timeout: 90_000 }, async () => {
    expect(hasMirrorModel("prompt-modifiers") && hasMirrorModel("clip-bpe-vocab")).toBe(true);
    const { service } = await start({ ATELIER_PROVISION_MODELS: "true", ATELIER_MODEL_MIRROR: mirrorOf("prompt-modifiers", "clip-bpe-vocab") });
    await lineMatching(service, /starter models done/);
    const logged = messages(service);
    expect(logged).toContain(LISTS_ARRIVING_NOTE);
    expect(logged.filter((message) => message.includes(MODIFIER_LISTS_MISSING_NOTE) || message.includes(MERGES_MISSING))).toEqual([]);
    expect(logged.some((message) => message === "starter model installed")).toBe(true);
  });

  it("are warned about with the install command when provisioning is off", { timeout: 60_000 }, async () => {
    const { service } = await start({ ATELIER_PROVISION_MODELS: "false" });
    await lineMatching(service, /prompt engine ready/);
    const logged = messages(service);
    expect(logged).toContain(MODIFIER_LISTS_MISSING_NOTE);
    expect(logged.some((message) => message.startsWith(MERGES_MISSING))).toBe(true);
    expect(logged).not.toContain(LISTS_ARRIVING_NOTE);
  });

  it("are warned about with the install command once provisioning failed to install them", { timeout: 90_000 }, async () => {
    const { service, dataDir } = await start({ ATELIER_PROVISION_MODELS: "true", ATELIER_MODEL_MIRROR: mirrorOf() });
    await lineMatching(service, /starter models done/);
    expect(messages(service)).toContain(LISTS_ARRIVING_NOTE);
    expect(messages(service)).not.toContain(MODIFIER_LISTS_MISSING_NOTE);
    // The next prompt call finds them still missing and nothing on its way.
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "bin/keys-cli.ts", "create", "--name", "probe", "--json"], {
      env: mainProcessEnv(dataDir),
    });
    const { key } = JSON.parse(stdout) as { key: string };
    const answer = await fetch(`${service.url}/api/v1/prompt/improve`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ prompt: "a lighthouse at dusk" }),
    });
    expect(answer.status).toBe(200);
    await lineMatching(service, /prompt-modifier lists are not installed/);
    expect(messages(service)).toContain(MODIFIER_LISTS_MISSING_NOTE);
  });
});
