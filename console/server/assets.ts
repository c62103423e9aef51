/**
 * The console's own static files (console/static) and vendored library files (registered with
 * {@link registerVendorAsset}), served by Atelier itself under `/assets/` with a content hash in
 * the URL, so they can be cached for a year (`immutable`) and still change with each release.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import express from "express";

export const ASSET_PREFIX = "/assets";
const STATIC_DIR = fileURLToPath(new URL("../static/", import.meta.url));
const ONE_YEAR_SECONDS = 365 * 24 * 3600;

const TYPES: Record<string, string> = {
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
  ".map": "application/json",
};

interface Asset {
  file: string;
  hash: string;
}

const assets = new Map<string, Asset>();

function hashOf(file: string): string {
  return createHash("sha256").update(fs.readFileSync(file)).digest("hex").slice(0, 12);
}

/**
 * Serves `file` (an absolute path, e.g. resolved inside node_modules) at `/assets/vendor/<name>`.
 * Call at start-up, before pages render {@link assetUrl}(`vendor/<name>`).
 */
export function registerVendorAsset(name: string, file: string): void {
  if (!/^[\w.-]+$/.test(name)) throw new Error(`Vendor asset name ${name} must be one plain file name.`);
  assets.set(`vendor/${name}`, { file, hash: hashOf(file) });
}

/** The URL of an asset, with its content hash: `assetUrl("console.css")` -> `/assets/console.css?v=1a2b...`. */
export function assetUrl(name: string): string {
  let asset = assets.get(name);
  if (!asset) {
    const file = path.join(STATIC_DIR, name);
    if (!file.startsWith(STATIC_DIR) || !fs.existsSync(file)) throw new Error(`No console asset ${name} in ${STATIC_DIR}.`);
    asset = { file, hash: hashOf(file) };
    assets.set(name, asset);
  }
  return `${ASSET_PREFIX}/${name}?v=${asset.hash}`;
}

/** Express handler for `/assets/*`: known assets only, long-cached, never a directory listing. */
export function serveAssets(): express.Router {
  const router = express.Router();
  router.get(`${ASSET_PREFIX}/*name`, (req, res, next) => {
    const name = (req.params as { name: string[] }).name.join("/");
    let asset = assets.get(name);
    if (!asset && !name.startsWith("vendor/")) {
      const file = path.join(STATIC_DIR, name);
      if (file.startsWith(STATIC_DIR) && fs.existsSync(file) && fs.statSync(file).isFile()) asset = { file, hash: "" };
    }
    const type = asset ? TYPES[path.extname(asset.file)] : undefined;
    if (!asset || !type) return next();
    res.setHeader("Content-Type", type);
    res.setHeader("Cache-Control", `public, max-age=${ONE_YEAR_SECONDS}, immutable`);
    res.sendFile(asset.file, { dotfiles: "deny", lastModified: false, cacheControl: false });
  });
  return router;
}
