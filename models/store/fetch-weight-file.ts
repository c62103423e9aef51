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

export interface FetchWeightOptions extends Omit<DownloadOptions, "headers"> {
  /** Local mirror folder or http(s) base URL of a mirror; absent: the public origin. */
  from?: string;
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

async function openSource(location: string, signal: AbortSignal, headers: Record<string, string>): Promise<Readable> {
  if (!isUrl(location)) {
    if (!fs.existsSync(location)) throw new ModelInstallError(`${location} does not exist`);
    return fs.createReadStream(location);
  }
  let response: Response;
  try {
    response = await fetch(location, { signal, redirect: "follow", headers: { "user-agent": INSTALLER_USER_AGENT, ...headers } });
  } catch (error) {
    if (signal.aborted) throw error;
    throw unreachable(location, error);
  }
  if (!response.ok || !response.body) throw new ModelInstallError(`${location} answered HTTP ${response.status}`);
  return Readable.fromWeb(response.body as import("node:stream/web").ReadableStream<Uint8Array>);
}

const OFFLINE_FILES_HINT =
  "Without network access, install from a copy of the files: `npm run models -- pull ID --from DIR` (a mirror folder or " +
  "http(s) URL), or set ATELIER_MODEL_MIRROR to it";

/** A request that got no answer, with why (fetch itself says only "fetch failed") and what to do instead. */
export function unreachable(url: string, error: unknown, hint = OFFLINE_FILES_HINT): ModelInstallError {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  const reason = typeof cause?.code === "string" ? cause.code : typeof cause?.message === "string" ? cause.message : (error as Error).message;
  return new ModelInstallError(`could not reach ${new URL(url).host} (${reason}). ${hint}`, { cause: error });
}

export const INSTALLER_USER_AGENT = "Atelier-ModelInstaller/1";

/** What a downloaded file must be. At least one digest must be given; every given one is checked. */
export interface ExpectedFile {
  /** Name for messages and progress, e.g. `unet/model.onnx`. */
  name: string;
  size: number;
  sha256?: string;
  /** Git's blob id (sha1 of `blob <size>\0` + content): what a hub publishes for files kept in git itself. */
  gitBlobSha1?: string;
}

export interface DownloadOptions {
  signal?: AbortSignal;
  onProgress?: (progress: FileProgress) => void;
  /** Abort a download that receives nothing for this long, in milliseconds. */
  idleTimeoutMs?: number;
  /** Extra request headers (an access token for the origin that asked for it, never for redirects elsewhere). */
  headers?: Record<string, string>;
}

/**
 * Streams `location` (a path or an http(s) URL) to `target`, hashing as it goes, and throws
 * ModelInstallError unless size and every expected digest match. Returns the sha256 it computed.
 */
export async function downloadVerified(location: string, target: string, expected: ExpectedFile, options: DownloadOptions = {}): Promise<string> {
  if (expected.sha256 === undefined && expected.gitBlobSha1 === undefined) throw new ModelInstallError(`${expected.name}: no checksum to verify it against`);
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
    const source = await openSource(location, controller.signal, options.headers ?? {});
    const sha256 = createHash("sha256");
    const gitSha1 = expected.gitBlobSha1 === undefined ? undefined : createHash("sha1").update(`blob ${expected.size}\0`);
    let received = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        received += chunk.length;
        if (received > expected.size) {
          callback(new ModelInstallError(`${location} is larger than the expected ${expected.size} bytes`));
          return;
        }
        touch();
        sha256.update(chunk);
        gitSha1?.update(chunk);
        options.onProgress?.({ file: expected.name, receivedBytes: received, totalBytes: expected.size });
        callback(null, chunk);
      },
    });
    fs.mkdirSync(path.dirname(target), { recursive: true });
    await pipeline(source, meter, fs.createWriteStream(target), { signal: controller.signal });
    if (received !== expected.size) throw new ModelInstallError(`${location} has ${received} bytes, expected ${expected.size}`);
    const digest = sha256.digest("hex");
    if (expected.sha256 !== undefined && digest !== expected.sha256) {
      throw new ModelInstallError(`checksum mismatch for ${expected.name} from ${location}: expected sha256 ${expected.sha256}, got ${digest}`);
    }
    const blobId = gitSha1?.digest("hex");
    if (blobId !== undefined && blobId !== expected.gitBlobSha1) {
      throw new ModelInstallError(`checksum mismatch for ${expected.name} from ${location}: expected git blob ${expected.gitBlobSha1}, got ${blobId}`);
    }
    return digest;
  } catch (error) {
    if (controller.signal.aborted && controller.signal.reason instanceof ModelInstallError) throw controller.signal.reason;
    throw error;
  } finally {
    clearTimeout(idle);
    options.signal?.removeEventListener("abort", abort);
  }
}

/** Writes `file` to `target`, verifying size and sha256; throws ModelInstallError on any mismatch. */
export async function fetchWeightFile(file: WeightFile, target: string, options: FetchWeightOptions = {}): Promise<void> {
  await downloadVerified(describeSource(file, options.from), target, file, options);
}

/** SHA-256 of a file on disk, streamed. */
export async function sha256OfFile(file: string): Promise<string> {
  const hash = createHash("sha256");
  await pipeline(fs.createReadStream(file), hash);
  return hash.digest("hex");
}
