/**
 * Files of a model repository on a Hugging Face–compatible hub, read the way huggingface_hub reads
 * them: a HEAD on `{hub}/{repository}/resolve/{revision}/{path}` answers
 *
 *   X-Repo-Commit                   the commit the revision points at
 *   X-Linked-Etag + X-Linked-Size   for a large (LFS/Xet) file: its sha256 and size, with a redirect
 *                                   to the storage that serves its bytes
 *   ETag + Content-Length           for a small file kept in git: its git blob id and size
 *
 * Relative redirects (a renamed repository) are followed on the hub; an absolute one is where the
 * bytes live. The access token goes to the hub's own origin only, never to the storage it redirects to.
 */
import type { HubExport } from "../catalog/catalog-types.js";
import { downloadVerified, INSTALLER_USER_AGENT, ModelInstallError, unreachable, type ExpectedFile, type FileProgress } from "./fetch-weight-file.js";
import path from "node:path";

/** One file as the hub describes it at a commit. */
export interface HubFile {
  name: string;
  /** The commit the requested revision resolved to. */
  commit: string;
  size: number;
  /** Published sha256 (large files). */
  sha256?: string;
  /** Published git blob id (small files). */
  gitBlobSha1?: string;
  /** Absolute URL of the bytes. */
  downloadUrl: string;
  /** Whether `downloadUrl` is on the hub's origin (and may receive the token). */
  onHub: boolean;
}

export interface HubClientOptions {
  /** e.g. https://huggingface.co (ATELIER_MODEL_HUB_URL). */
  baseUrl: string;
  /** Access token for gated or private repositories (ATELIER_MODEL_HUB_TOKEN). */
  token?: string;
}

const MAX_HUB_REDIRECTS = 5;
const COMMIT = /^[0-9a-f]{40}$/;

/** The digest in an ETag header value, without weak marker and quotes. */
function etagDigest(value: string | null): string | undefined {
  return value?.replace(/^W\//, "").replace(/^"|"$/g, "").toLowerCase() || undefined;
}

export class HubClient {
  private readonly base: URL;

  constructor(private readonly options: HubClientOptions) {
    this.base = new URL(options.baseUrl.replace(/\/+$/, "") + "/");
  }

  /** The hub's origin, e.g. https://huggingface.co. */
  get origin(): string {
    return this.base.origin;
  }

  /** URL of `name` in `repository` at `revision` (a branch, tag or commit). */
  fileUrl(repository: string, revision: string, name: string): string {
    const encodedName = name.split("/").map(encodeURIComponent).join("/");
    return new URL(`${repository}/resolve/${encodeURIComponent(revision)}/${encodedName}`, this.base).href;
  }

  /** Request headers for `url`: the token only for the hub's own origin. */
  headersFor(url: string): Record<string, string> {
    return this.options.token && new URL(url).origin === this.base.origin ? { authorization: `Bearer ${this.options.token}` } : {};
  }

  /**
   * What the hub says of one file, or undefined when the repository has no such file at that
   * revision. Throws ModelInstallError when the repository or revision does not exist, needs a
   * token, or the hub publishes no checksum for the file.
   */
  async describe(repository: string, revision: string, name: string, signal?: AbortSignal): Promise<HubFile | undefined> {
    let url = this.fileUrl(repository, revision, name);
    for (let redirects = 0; ; redirects++) {
      let response: Response;
      try {
        response = await fetch(url, {
          method: "HEAD",
          redirect: "manual",
          signal,
          headers: { "user-agent": INSTALLER_USER_AGENT, "accept-encoding": "identity", ...this.headersFor(url) },
        });
      } catch (error) {
        if (signal?.aborted) throw error;
        throw unreachable(url, error, "Without network access, export the model elsewhere and install it with `npm run models -- import ID DIR`, or point ATELIER_MODEL_HUB_URL at a hub this machine reaches");
      }
      const location = response.headers.get("location");
      const linkedEtag = etagDigest(response.headers.get("x-linked-etag"));
      if (response.status >= 300 && response.status < 400 && location && !linkedEtag) {
        const next = new URL(location, url);
        if (next.origin !== this.base.origin || redirects >= MAX_HUB_REDIRECTS) {
          throw new ModelInstallError(`${url} redirected to ${next.href} without publishing the file's checksum`);
        }
        url = next.href;
        continue;
      }
      const errorCode = response.headers.get("x-error-code");
      if (response.status === 404 && (errorCode === null || errorCode === "EntryNotFound")) return undefined;
      if (response.status === 401 || response.status === 403) {
        throw new ModelInstallError(
          `the model hub refused ${url} (HTTP ${response.status}${errorCode ? `, ${errorCode}` : ""}): the repository does not exist, ` +
            "is private, or is gated (accept its licence on the hub and set ATELIER_MODEL_HUB_TOKEN)",
        );
      }
      if (!response.ok && !(response.status >= 300 && response.status < 400)) {
        throw new ModelInstallError(`the model hub answered HTTP ${response.status}${errorCode ? ` (${errorCode})` : ""} for ${url}`);
      }
      const commit = response.headers.get("x-repo-commit")?.toLowerCase();
      if (!commit || !COMMIT.test(commit)) throw new ModelInstallError(`${url}: the hub did not say which commit it serves (no X-Repo-Commit)`);
      const digest = linkedEtag ?? etagDigest(response.headers.get("etag"));
      const size = Number(response.headers.get("x-linked-size") ?? response.headers.get("content-length"));
      if (!Number.isSafeInteger(size) || size < 0) throw new ModelInstallError(`${url}: the hub did not give the file's size`);
      // Small files are read back at the resolved commit, so a branch moving meanwhile changes nothing.
      const downloadUrl = linkedEtag && location ? new URL(location, url).href : url.replace(`/resolve/${encodeURIComponent(revision)}/`, `/resolve/${commit}/`);
      const file: HubFile = { name, commit, size, downloadUrl, onHub: new URL(downloadUrl).origin === this.base.origin };
      if (digest && /^[0-9a-f]{64}$/.test(digest)) file.sha256 = digest;
      else if (digest && /^[0-9a-f]{40}$/.test(digest) && !linkedEtag) file.gitBlobSha1 = digest;
      else throw new ModelInstallError(`${url}: the hub published no checksum for ${name}, so it cannot be verified`);
      return file;
    }
  }
}

export interface HubDownload {
  /** The commit every file came from. */
  commit: string;
  /** File name → sha256 computed while downloading. */
  files: Record<string, string>;
  /** File name → the checksum the hub published, as `sha256:<hex>` or `git-blob:<hex>`. */
  attested: Record<string, string>;
  /** Optional files the repository does not have at that commit. */
  skipped: string[];
}

export interface HubDownloadOptions {
  signal?: AbortSignal;
  onProgress?: (progress: FileProgress) => void;
}

/**
 * Downloads a hub export into `folder`, every file from the one commit its revision resolved to
 * (or the pinned commit), each verified against the hub's published checksum and, when pinned,
 * against the catalog's too.
 */
export async function downloadHubExport(hub: HubExport, folder: string, client: HubClient, options: HubDownloadOptions = {}): Promise<HubDownload> {
  const requested = hub.pinned?.revision ?? hub.revision;
  let commit = COMMIT.test(requested) ? requested : undefined;
  const result: HubDownload = { commit: requested, files: {}, attested: {}, skipped: [] };
  const pins = hub.pinned?.files ?? {};
  const required = new Set([...hub.files, ...Object.keys(pins)]);
  const names = [...new Set([...hub.files, ...hub.optionalFiles, ...Object.keys(pins)])];
  for (const name of names) {
    options.signal?.throwIfAborted();
    const file = await client.describe(hub.repository, commit ?? requested, name, options.signal);
    if (!file) {
      if (required.has(name)) throw new ModelInstallError(`${hub.repository} has no ${name} at ${commit ?? requested}`);
      result.skipped.push(name);
      continue;
    }
    if (commit !== undefined && file.commit !== commit) {
      throw new ModelInstallError(`${hub.repository}: ${name} came from commit ${file.commit}, expected ${commit}`);
    }
    commit = file.commit;
    const pin = pins[name];
    if (pin && ((file.sha256 !== undefined && file.sha256 !== pin.sha256) || file.size !== pin.size)) {
      throw new ModelInstallError(
        `${hub.repository}@${commit} ${name}: the hub publishes ${file.sha256 ?? "a git blob"} (${file.size} bytes), the catalog pinned ${pin.sha256} (${pin.size} bytes)`,
      );
    }
    const expected: ExpectedFile = { name, size: file.size, sha256: pin?.sha256 ?? file.sha256, gitBlobSha1: file.gitBlobSha1 };
    result.files[name] = await downloadVerified(file.downloadUrl, path.join(folder, name), expected, {
      signal: options.signal,
      onProgress: options.onProgress,
      headers: file.onHub ? client.headersFor(file.downloadUrl) : {},
    });
    result.attested[name] = file.sha256 !== undefined ? `sha256:${file.sha256}` : `git-blob:${file.gitBlobSha1}`;
  }
  result.commit = commit ?? requested;
  return result;
}
