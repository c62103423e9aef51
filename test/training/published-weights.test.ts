/**
 * The training project's loader of the published SRVGG compact weights (training/atelier_training/
 * published_weights.py): PyTorch, with the weights read from the ONNX graphs, must give onnxruntime's
 * output of those same graphs on a crop of a photograph, so a fine-tune starts exactly from them.
 * Needs the model mirror (ATELIER_MODEL_MIRROR) and Debian's python3-torch and python3-onnx.
 */
import { execFile, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import ort from "onnxruntime-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelMirror } from "../support/test-assets.js";

const run = promisify(execFile);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const trainingDir = path.join(repoRoot, "training");
const PYTHON = "/usr/bin/python3";

const MODULES = "torch, onnx, numpy, PIL";

interface Probe {
  onnx: string;
  input: string;
  output: string;
  input_shape: number[];
  output_shape: number[];
}

function readFloats(file: string): Float32Array {
  const bytes = fs.readFileSync(file);
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}

describe("published SRVGG compact weights loaded into PyTorch", () => {
  let tmp: string;
  let probes: Record<string, Probe>;

  beforeAll(async () => {
    const imports = spawnSync(PYTHON, ["-c", `import ${MODULES}`], { encoding: "utf8", timeout: 60_000 });
    if (imports.status !== 0) {
      throw new Error(`${PYTHON} cannot import ${MODULES}: apt-get install python3-torch python3-onnx python3-numpy python3-pil\n${imports.stderr}`);
    }
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "atelier-published-weights-"));
    await run(PYTHON, ["-m", "atelier_training.published_probe", "--photo", path.join(repoRoot, "data", "test-photos", "chelsea.png"), "--out", tmp], {
      cwd: trainingDir,
      timeout: 180_000,
      env: { ...process.env, ATELIER_MODEL_MIRROR: modelMirror, PYTHONWARNINGS: "ignore", OMP_NUM_THREADS: "1" },
    });
    probes = JSON.parse(fs.readFileSync(path.join(tmp, "result.json"), "utf8")) as Record<string, Probe>;
  }, 180_000);

  afterAll(() => {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  for (const variant of ["C3", "N3"]) {
    it(`${variant}: PyTorch's output equals onnxruntime's within 1e-4`, async () => {
      const probe = probes[variant]!;
      const session = await ort.InferenceSession.create(probe.onnx);
      try {
        const input = new ort.Tensor("float32", readFloats(probe.input), probe.input_shape);
        const { output } = await session.run({ input });
        expect(output!.dims).toEqual(probe.output_shape);
        const [, , h, w] = probe.input_shape as [number, number, number, number];
        expect(probe.output_shape).toEqual([1, 3, h * 4, w * 4]);
        const expected = readFloats(probe.output);
        const actual = output!.data as Float32Array;
        expect(actual.length).toBe(expected.length);
        let worst = 0;
        for (let i = 0; i < actual.length; i++) worst = Math.max(worst, Math.abs(actual[i]! - expected[i]!));
        expect(worst).toBeLessThan(1e-4);
        // The network changes the picture: a loader that dropped the body would give the bare base.
        let change = 0;
        const base = readFloats(probe.input);
        for (let y = 0; y < h * 4; y++) for (let x = 0; x < w * 4; x++) change += Math.abs(expected[y * w * 4 + x]! - base[Math.floor(y / 4) * w + Math.floor(x / 4)]!);
        expect(change / (h * 4 * w * 4)).toBeGreaterThan(1e-3);
      } finally {
        await session.release();
      }
    });
  }
});
