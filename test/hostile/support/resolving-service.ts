/**
 * Run inside fresh network and mount namespaces whose resolv.conf names 127.0.0.1 (see
 * finding-03-no-telemetry.test.ts): answers DNS on 127.0.0.1:53 with the stub, starts the whole
 * service, makes it load and run an onnxruntime model and fetch one named host, waits, and prints
 * every name the process asked the resolver for as one JSON line.
 */
import { gradientPng, dataUrl } from "../../support/test-images.js";
import { startTestService } from "../../support/test-service.js";
import { startStubDnsServer } from "./stub-dns-server.js";

const waitMs = Number(process.env.HOSTILE_WAIT_MS ?? 20_000);
const dns = await startStubDnsServer("127.0.0.1", 53);
const service = await startTestService({ ATELIER_MODELS_DIR: process.env.HOSTILE_MODELS_DIR ?? "" });
const key = await service.createKey();
const upscaled = await service.post("/tools/upscale", { imageUrl: dataUrl(await gradientPng(16, 16)), scale: 3, model: "espcn-x3" }, key);
const asked = await service.post("/tools/upscale", { imageUrl: "http://asked-for.example/cat.png", scale: 2 }, key);
await new Promise((resolve) => setTimeout(resolve, waitMs));
console.log(JSON.stringify({ upscaled: upscaled.status, asked: asked.status, queries: dns.queries }));
await service.close();
await dns.close();
process.exit(0);
