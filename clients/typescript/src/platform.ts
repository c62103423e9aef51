/**
 * What the core needs from the platform but cannot import itself without breaking browsers: reading
 * and writing local files. The Node entry point (node.ts) fills this in; in a browser paths and
 * `save()` explain that they need Node.
 */
export interface FileSystemAccess {
  readFile(path: string): Promise<Uint8Array>;
  writeFile(path: string, bytes: Uint8Array): Promise<void>;
  /** A `file:` URL as a path. */
  pathOfFileURL(url: URL): string;
}

export const platform: { files: FileSystemAccess | undefined } = { files: undefined };

export function files(what: string): FileSystemAccess {
  if (!platform.files) throw new TypeError(`${what} needs Node.js file access: import the client from "@atelier-ai/client" in Node (its "node" entry point), or pass a Blob, bytes or a URL.`);
  return platform.files;
}
