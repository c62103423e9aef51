/** Loader hooks for record-imports.mjs: reports each module URL as it is loaded. */
/** @type {import("node:worker_threads").MessagePort} */
let port;

/** @param {{ port: import("node:worker_threads").MessagePort }} data */
export function initialize(data) {
  port = data.port;
}

/**
 * @param {string} url
 * @param {object} context
 * @param {(url: string, context: object) => Promise<unknown>} nextLoad
 */
export async function load(url, context, nextLoad) {
  port.postMessage(url);
  return nextLoad(url, context);
}
