/**
 * The console's model installs: the real installer in the background over the model mirror, with
 * progress, failures, cancellation and removal as the Models page sees them.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AtelierError } from "../../core/errors.js";
import { ModelInstalls, type InstallJob } from "../../server/model-installs/model-installs.js";
import { catalogEntry, weightSize } from "../../models/catalog/model-catalog.js";
import { hasMirrorModel, modelMirror } from "../support/test-assets.js";

const MODEL = "espcn-x3";
const open: ModelInstalls[] = [];

function installs(from: string | undefined = modelMirror): ModelInstalls {
  const service = new ModelInstalls({ modelsDir: fs.mkdtempSync(path.join(os.tmpdir(), "atelier-installs-")), from });
  open.push(service);
  return service;
}

async function settled(service: ModelInstalls, id: string): Promise<InstallJob> {
  await expect.poll(() => service.job(id)?.state, { timeout: 30_000 }).toMatch(/installed|failed|cancelled/);
  return service.job(id)!;
}

afterEach(async () => {
  for (const service of open.splice(0)) {
    await service.close();
    fs.rmSync(service.store.modelsDir, { recursive: true, force: true });
  }
});

describe("console model installs", () => {
  it.skipIf(!hasMirrorModel("superres-espcn-x3"))("installs in the background with byte progress, then removes", async () => {
    const service = installs();
    const entry = catalogEntry(MODEL)!;
    const job = service.install(MODEL, "admin-1");
    expect(["queued", "running"]).toContain(job.state);
    expect(job).toMatchObject({ modelId: MODEL, receivedBytes: 0, totalBytes: weightSize(entry), requestedBy: "admin-1" });
    expect(service.install(MODEL, "admin-2").requestedBy).toBe("admin-1");
    const done = await settled(service, MODEL);
    expect(done).toMatchObject({ state: "installed", receivedBytes: weightSize(entry), totalBytes: weightSize(entry) });
    expect(service.store.isInstalled(entry)).toBe(true);
    expect(service.remove(MODEL)).toBe(true);
    expect(service.store.isInstalled(entry)).toBe(false);
    expect(service.remove(MODEL)).toBe(false);
  });

  it("reports a failed fetch on the job and leaves nothing installed", async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-empty-mirror-"));
    const service = installs(empty);
    service.install(MODEL, "admin-1");
    const done = await settled(service, MODEL);
    expect(done.state).toBe("failed");
    expect(done.message).toMatch(/espcn|ENOENT|not found|mirror/i);
    expect(service.store.isInstalled(catalogEntry(MODEL)!)).toBe(false);
    expect(fs.readdirSync(service.store.modelsDir).filter((name) => !name.startsWith("."))).toEqual([]);
    fs.rmSync(empty, { recursive: true, force: true });
  });

  it("cancels a queued install before it starts", async () => {
    const service = installs();
    service.install(MODEL, "admin-1");
    service.install("lsdir-compact-x4", "admin-1");
    expect(service.cancel("lsdir-compact-x4")).toBe(true);
    expect((await settled(service, "lsdir-compact-x4")).state).toBe("cancelled");
    expect(service.cancel("lsdir-compact-x4")).toBe(false);
  });

  it("refuses unknown models, built-in ones and npm-shipped ones with a clear error", () => {
    const service = installs();
    const refusal = (call: () => unknown) => {
      try {
        call();
      } catch (error) {
        return error as AtelierError;
      }
      throw new Error("expected a refusal");
    };
    expect(refusal(() => service.install("no-such-model", "a"))).toMatchObject({ code: "NOT_FOUND", message: 'No model "no-such-model" in the catalog.' });
    expect(refusal(() => service.install("lanczos", "a"))).toMatchObject({ code: "INVALID_INPUT", message: "lanczos is built in; there is nothing to install." });
    expect(refusal(() => service.install("esrgan-slim", "a")).message).toMatch(/cannot be installed from the console: npm install/);
    expect(refusal(() => service.remove("esrgan-slim")).message).toMatch(/npm uninstall/);
  });

  it("installs a non-commercial or unlicensed model only once its licence is accepted", () => {
    const service = installs();
    for (const [id, why] of [["udnie", "its licence forbids commercial use"], ["candy-lite", "its weights were published without a licence"]] as const) {
      let refused: unknown;
      try {
        service.install(id, "admin-1");
      } catch (error) {
        refused = error;
      }
      expect(refused).toBeInstanceOf(AtelierError);
      expect((refused as AtelierError).code).toBe("INVALID_INPUT");
      expect((refused as AtelierError).message).toContain(`${id} is installed only once its licence is accepted, because ${why}: "${catalogEntry(id)!.license}"`);
      expect(service.job(id)).toBeUndefined();
      expect(service.install(id, "admin-1", { licenseAccepted: true }).modelId).toBe(id);
    }
  });
});
