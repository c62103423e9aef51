/**
 * Copies or downloads one weight file into place, hashing while it streams, so a file is never
 * read twice and a wrong byte is caught before anything trusts it. Sources: a local mirror folder,
 * a mirror served over HTTP(S) with the same layout, or the file's public origin URL.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { WeightFile } from "../catalog/catalog-types.js";

export class ModelInstallError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ModelInstallError";
  }
}

export interface FileProgress {
  file: string;
  receivedBytes: number;
  totalBytes: number;
}

export interface FetchWeightOptions {
  /** Local mirror folder or http(s) base URL of a mirror; absent: the public origin. */
  from?: string;
  signal?: AbortSignal;
  onProgress?: (progress: FileProgress) => void;
  /** Abort a download that receives nothing for this long, in milliseconds. */
  idleTimeoutMs?: number;
}

const isUrl = (value: string) => /^https?:\/\//i.test(value);

/** Where this file will be read from, for messages and install records. */
export function describeSource(file: WeightFile, from: string | undefined): string {
  if (from !== undefined) {
    if (!file.origin.mirror) throw new ModelInstallError(`${file.name} has no mirror path, so it cannot come from ${from}`);
    return isUrl(from) ? `${from.replace(/\/+$/, "")}/${file.origin.mirror}` : path.join(from, file.origin.mirror);
  }
  if (!file.origin.url) throw new ModelInstallError(`${file.name} has no public origin; install it from a mirror with --from DIR`);
  return file.origin.url;
}

async function openSource(location: string, signal: AbortSignal): Promise<Readable> {
  if (!isUrl(location)) {
    if (!fs.existsSync(location)) throw new ModelInstallError(`${location} does not exist`);
    return fs.createReadStream(location);
  }
  let response: Response;
  try {
    response = await fetch(location, { signal, redirect: "follow", headers: { "user-agent": "Atelier-ModelInstaller/1" } });
  } catch (error) {
    throw new ModelInstallError(`could not download ${location}: ${(error as Error).message}`, { cause: error });
  }
  if (!response.ok || !response.body) throw new ModelInstallError(`${location} answered HTTP ${response.status}`);
  return Readable.fromWeb(response.body as import("node:stream/web").ReadableStream<Uint8Array>);
}

/** Writes `file` to `target`, verifying size and sha256; throws ModelInstallError on any mismatch. */
export async function fetchWeightFile(file: WeightFile, target: string, options: FetchWeightOptions = {}): Promise<void> {
  const location = describeSource(file, options.from);
  const controller = new AbortController();
  const abort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", abort, { once: true });
  let idle: NodeJS.Timeout | undefined;
  const idleTimeoutMs = options.idleTimeoutMs ?? 60_000;
  const touch = () => {
    clearTimeout(idle);
    idle = setTimeout(() => controller.abort(new ModelInstallError(`${location}: no data for ${idleTimeoutMs} ms`)), idleTimeoutMs);
  };
  try {
    touch();
    const source = await openSource(location, controller.signal);
    const hash = createHash("sha256");
    let received = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        received += chunk.length;
        if (received > file.size) {
          callback(new ModelInstallError(`${location} is larger than the expected ${file.size} bytes`));
          return;
        }
        touch();
        hash.update(chunk);
        options.onProgress?.({ file: file.name, receivedBytes: received, totalBytes: file.size });
        callback(null, chunk);
      },
    });
    fs.mkdirSync(path.dirname(target), { recursive: true });
    await pipeline(source, meter, fs.createWriteStream(target), { signal: controller.signal });
    if (received !== file.size) throw new ModelInstallError(`${location} has ${received} bytes, expected ${file.size}`);
    const digest = hash.digest("hex");
    if (digest !== file.sha256) {
      throw new ModelInstallError(`checksum mismatch for ${file.name} from ${location}: expected sha256 ${file.sha256}, got ${digest}`);
    }
  } catch (error) {
    if (controller.signal.aborted && controller.signal.reason instanceof ModelInstallError) throw controller.signal.reason;
    throw error;
  } finally {
    clearTimeout(idle);
    options.signal?.removeEventListener("abort", abort);
  }
}

/** SHA-256 of a file on disk, streamed. */
export async function sha256OfFile(file: string): Promise<string> {
  const hash = createHash("sha256");
  await pipeline(fs.createReadStream(file), hash);
  return hash.digest("hex");
}
