/**
 * Run inside fresh network and mount namespaces whose resolv.conf names 127.0.0.1 (see
 * security-11-special-use-names.test.ts): answers DNS on 127.0.0.1:53 with the stub, starts the
 * whole service, sends it image URLs and webhook URLs on the local and special-use names in
 * LOCAL_NAMES (JSON in the environment) and one public-looking name of each kind, waits until every
 * accepted webhook has been attempted, and prints the answers and every name the process asked the
 * resolver for as one JSON line.
 */
import { startTestService } from "../../support/test-service.js";
import { startStubDnsServer } from "./stub-dns-server.js";

const names = JSON.parse(process.env.LOCAL_NAMES ?? "[]") as string[];
const dns = await startStubDnsServer("127.0.0.1", 53);
const service = await startTestService({ ATELIER_FETCH_TIMEOUT_MS: "5000", ATELIER_WEBHOOK_TIMEOUT_MS: "5000" });
const key = await service.createKey("local names");

const images: Record<string, { status: number; message: string }> = {};
const webhooks: Record<string, { status: number; message: string }> = {};
const accepted: string[] = [];
for (const name of [...names, "asked-for.example"]) {
  const answer = await service.post("/tools/upscale", { imageUrl: `http://${name}/cat.png`, scale: 2, model: "lanczos" }, key);
  images[name] = { status: answer.status, message: ((await answer.json()) as { message: string }).message };
}
for (const name of [...names, "hook-asked.example"]) {
  const answer = await service.post("/prompt/improve", { prompt: "a lantern", webhookUrl: `http://${name}/hook` }, key);
  const body = (await answer.json()) as { id: string; message: string };
  webhooks[name] = { status: answer.status, message: body.message };
  if (answer.status === 202) accepted.push(body.id);
}
const deadline = Date.now() + 30_000;
for (const id of accepted) {
  for (;;) {
    const job = (await (await fetch(`${service.url}/api/v1/jobs/${id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as { webhook?: { attempts: unknown[] } };
    if ((job.webhook?.attempts.length ?? 0) > 0 || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
console.log(JSON.stringify({ images, webhooks, queries: dns.queries }));
await service.close(Date.now());
await dns.close();
process.exit(0);
