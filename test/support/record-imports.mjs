/**
 * `node --import ./test/support/record-imports.mjs app.js`: writes, when the process exits, what it
 * loaded to the file named by RECORD_IMPORTS_TO, as JSON `{ modules, sharedObjects }`: the URL of
 * every module that went through the ES module loader (every project module and every package
 * entry point) of the main thread, and every native library mapped into the process by any thread
 * (onnxruntime, libvips, ...). Worker threads inherit the flag and record nothing themselves.
 */
import fs from "node:fs";
import { register } from "node:module";
import { isMainThread, MessageChannel } from "node:worker_threads";

const target = process.env.RECORD_IMPORTS_TO;
if (!target) throw new Error("record-imports: set RECORD_IMPORTS_TO to the file to write");
if (isMainThread) record(target);

/** @param {string} target */
function record(target) {
  /** @type {Set<string>} */
  const modules = new Set();
  const { port1, port2 } = new MessageChannel();
  port1.on("message", (url) => modules.add(url));
  port1.unref();
  register("./record-imports-hooks.mjs", import.meta.url, { data: { port: port2 }, transferList: [port2] });
  process.on("exit", () => {
    const report = /** @type {{ sharedObjects: string[] }} */ (process.report.getReport());
    const sharedObjects = report.sharedObjects;
    fs.writeFileSync(target, JSON.stringify({ modules: [...modules], sharedObjects }));
  });
}
