/**
 * A model hub on loopback that answers like the Hugging Face hub does for `resolve` URLs: large
 * files redirect to a storage server on another origin with X-Linked-Etag (sha256) and
 * X-Linked-Size, small files answer directly with their git blob id as ETag, every answer names the
 * commit in X-Repo-Commit, and missing files or revisions carry X-Error-Code. Tests move branches,
 * tamper with stored bytes, gate repositories and rename them.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";

export interface HubRequest {
  method: string;
  path: string;
  authorization?: string;
}

export interface FakeModelHub {
  url: string;
  storageUrl: string;
  /** Every request to the hub, in order. */
  hubRequests: HubRequest[];
  /** Every request to the storage server, in order. */
  storageRequests: HubRequest[];
  /** Adds a commit of `repository` holding `files`, points `branch` at it, and returns its id. */
  commit(repository: string, files: Record<string, Buffer>, branch?: string): string;
  /** Points `branch` of `repository` at `commit`. */
  moveBranch(repository: string, branch: string, commit: string): void;
  /** Serves other bytes than the published ones for the large file with this sha256. */
  tamper(sha256: string, bytes: Buffer): void;
  /** Serves other bytes than the published ones (ETag unchanged) for a small file at `commit`. */
  tamperSmall(commit: string, name: string, bytes: Buffer): void;
  /** Only requests with `Authorization: Bearer <token>` may read this repository. */
  gate(repository: string, token: string): void;
  /** `from` answers with a relative redirect to `to`, as the hub does for a renamed repository. */
  rename(from: string, to: string): void;
  /** Called before each hub request is answered (to move a branch mid-pull, say). */
  onRequest?: (request: HubRequest) => void;
  close(): Promise<void>;
}

/** Files stored in large-file storage on the real hub; the rest live in git. */
const isLargeFile = (name: string) => /\.(onnx|pb|onnx_data|bin|safetensors)$/.test(name);

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");
const gitBlobId = (bytes: Buffer) => createHash("sha1").update(`blob ${bytes.length}\0`).update(bytes).digest("hex");

/** All regular files under `root` as relative `/`-separated names with their bytes. */
export function readFolder(root: string): Record<string, Buffer> {
  const files: Record<string, Buffer> = {};
  for (const entry of fs.readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || entry.name.startsWith(".")) continue;
    const full = path.join(entry.parentPath, entry.name);
    files[path.relative(root, full).split(path.sep).join("/")] = fs.readFileSync(full);
  }
  return files;
}

function listen(server: http.Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

export async function startFakeModelHub(): Promise<FakeModelHub> {
  const commits = new Map<string, Map<string, Record<string, Buffer>>>();
  const branches = new Map<string, Map<string, string>>();
  const blobs = new Map<string, Buffer>();
  const gates = new Map<string, string>();
  const renames = new Map<string, string>();
  const smallOverrides = new Map<string, Buffer>();
  let commitCounter = 0;

  const storage = http.createServer((req, res) => {
    hub.storageRequests.push({ method: req.method ?? "", path: req.url ?? "", authorization: req.headers.authorization });
    const digest = /^\/blobs\/([0-9a-f]{64})$/.exec(req.url ?? "")?.[1];
    const bytes = digest ? blobs.get(digest) : undefined;
    if (!bytes) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-length": bytes.length });
    res.end(req.method === "HEAD" ? undefined : bytes);
  });

  const server = http.createServer((req, res) => {
    const request: HubRequest = { method: req.method ?? "", path: decodeURIComponent(req.url ?? ""), authorization: req.headers.authorization };
    hub.hubRequests.push(request);
    hub.onRequest?.(request);
    const match = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(request.path);
    if (!match) {
      res.writeHead(404, { "x-error-code": "RepoNotFound" }).end();
      return;
    }
    const [, repository, revision, name] = match as unknown as [string, string, string, string];
    const renamed = renames.get(repository);
    if (renamed) {
      res.writeHead(307, { location: `/${renamed}/resolve/${revision}/${name}` }).end();
      return;
    }
    const repoCommits = commits.get(repository);
    const gate = gates.get(repository);
    if (!repoCommits || (gate && req.headers.authorization !== `Bearer ${gate}`)) {
      res.writeHead(401, { "x-error-code": repoCommits ? "GatedRepo" : "RepoNotFound" }).end();
      return;
    }
    const commitId = branches.get(repository)?.get(revision) ?? (repoCommits.has(revision) ? revision : undefined);
    if (!commitId) {
      res.writeHead(404, { "x-error-code": "RevisionNotFound" }).end();
      return;
    }
    const bytes = repoCommits.get(commitId)![name];
    if (!bytes) {
      res.writeHead(404, { "x-error-code": "EntryNotFound", "x-repo-commit": commitId }).end();
      return;
    }
    if (isLargeFile(name)) {
      const digest = sha256(bytes);
      res
        .writeHead(302, {
          location: `${hub.storageUrl}/blobs/${digest}`,
          "x-repo-commit": commitId,
          "x-linked-etag": `"${digest}"`,
          "x-linked-size": String(bytes.length),
        })
        .end();
      return;
    }
    const served = smallOverrides.get(`${commitId}:${name}`) ?? bytes;
    res.writeHead(200, { "x-repo-commit": commitId, etag: `"${gitBlobId(bytes)}"`, "content-length": served.length });
    res.end(req.method === "HEAD" ? undefined : served);
  });

  const hub: FakeModelHub = {
    url: await listen(server),
    storageUrl: await listen(storage),
    hubRequests: [],
    storageRequests: [],
    commit(repository, files, branch = "main") {
      const id = createHash("sha1").update(`${repository}:${++commitCounter}`).digest("hex");
      if (!commits.has(repository)) commits.set(repository, new Map());
      commits.get(repository)!.set(id, files);
      for (const [name, bytes] of Object.entries(files)) if (isLargeFile(name)) blobs.set(sha256(bytes), bytes);
      hub.moveBranch(repository, branch, id);
      return id;
    },
    moveBranch(repository, branch, commit) {
      if (!branches.has(repository)) branches.set(repository, new Map());
      branches.get(repository)!.set(branch, commit);
    },
    tamper(digest, bytes) {
      blobs.set(digest, bytes);
    },
    tamperSmall(commit, name, bytes) {
      smallOverrides.set(`${commit}:${name}`, bytes);
    },
    gate(repository, token) {
      gates.set(repository, token);
    },
    rename(from, to) {
      renames.set(from, to);
    },
    close: () =>
      Promise.all([server, storage].map((one) => new Promise<void>((done) => one.close(() => done())))).then(() => undefined),
  };
  return hub;
}
