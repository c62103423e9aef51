/**
 * SSRF: every URL field (imageUrl, replacement) against a table of private, reserved and disguised
 * addresses, and redirect chains from an allow-listed fixture to them. Asserts a 4xx (never a 5xx),
 * bounded time, and that no forbidden listener is ever contacted.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dataUrl, gradientPng } from "../support/test-images.js";
import { startTestService, type TestService } from "../support/test-service.js";
import { errorCodeOf, forbiddenListener, rawRequest } from "./support/hostile-service.js";

let service: TestService;
let key: string;
let fixture: http.Server;
let fixturePort: number;
let forbidden: Awaited<ReturnType<typeof forbiddenListener>>;
let png: Buffer;

beforeAll(async () => {
  png = await gradientPng(8, 8);
  forbidden = await forbiddenListener();
  // The fixture serves /image.png, and /hop/<n>/<target> redirects n times before sending the client to <target>.
  fixture = http.createServer((req, res) => {
    const url = new URL(req.url!, "http://fixture");
    if (url.pathname === "/image.png") return void res.writeHead(200, { "content-type": "image/png" }).end(png);
    const hop = /^\/hop\/(\d+)\/(.*)$/.exec(url.pathname);
    if (hop) {
      const left = Number(hop[1]);
      const target = decodeURIComponent(hop[2]!);
      const location = left > 0 ? `/hop/${left - 1}/${encodeURIComponent(target)}` : target;
      return void res.writeHead(302, { location }).end();
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => fixture.listen(0, "127.0.0.1", resolve));
  fixturePort = (fixture.address() as AddressInfo).port;
  // Only the fixture's port on loopback is opened, as an operator would open one internal image host.
  service = await startTestService({ ATELIER_ALLOWED_PRIVATE_HOSTS: `127.0.0.1:${fixturePort},localhost:${fixturePort}`, ATELIER_FETCH_TIMEOUT_MS: "3000" });
  key = await service.createKey("ssrf", 100_000);
});
afterAll(async () => {
  await service?.close();
  fixture?.close();
  await forbidden?.close();
});

const f = () => forbidden.port;
const DIRECT: (() => string)[] = [
  () => `http://127.0.0.1:${f()}/x.png`,
  () => `http://localhost:${f()}/x.png`,
  () => `http://[::1]:${f()}/x.png`,
  () => `http://[::ffff:127.0.0.1]:${f()}/x.png`,
  () => `http://[::ffff:7f00:1]:${f()}/x.png`,
  () => `http://2130706433:${f()}/x.png`,
  () => `http://0x7f.1:${f()}/x.png`,
  () => `http://0177.0.0.1:${f()}/x.png`,
  () => `http://127.1:${f()}/x.png`,
  () => `http://0.0.0.0:${f()}/x.png`,
  () => `http://[::]:${f()}/x.png`,
  () => `http://[64:ff9b::7f00:1]:${f()}/x.png`,
  () => `http://[2002:7f00:1::]:${f()}/x.png`,
  () => `http://169.254.169.254/latest/meta-data/`,
  () => `http://[fd00:ec2::254]/latest/meta-data/`,
  () => `http://10.0.0.1/x.png`,
  () => `http://172.16.0.1/x.png`,
  () => `http://192.168.0.1/x.png`,
  () => `http://100.64.0.1/x.png`,
  () => `http://198.18.0.1/x.png`,
  () => `http://224.0.0.1/x.png`,
  () => `http://255.255.255.255/x.png`,
  () => `http://[fe80::1]/x.png`,
  () => `http://[fc00::1]/x.png`,
  () => `http://[ff02::1]/x.png`,
  () => `http://user:pass@127.0.0.1:${fixturePort}/image.png`,
  () => `file:///etc/passwd`,
  () => `gopher://127.0.0.1:${f()}/_x`,
  () => `ftp://127.0.0.1:${f()}/x.png`,
  () => `javascript:alert(1)`,
  () => `data:text/html;base64,PGgxPg==`,
  () => `http://${"a".repeat(300)}.example/x.png`,
  () => `http://exa mple.com/x.png`,
  () => `//127.0.0.1:${f()}/x.png`,
];
const REDIRECTED: (() => string)[] = [
  () => `http://127.0.0.1:${f()}/x.png`,
  () => `http://localhost:${f()}/x.png`,
  () => `http://[::1]:${f()}/x.png`,
  () => `http://2130706433:${f()}/x.png`,
  () => `http://169.254.169.254/latest/meta-data/`,
  () => `file:///etc/passwd`,
  () => `gopher://127.0.0.1:${f()}/_x`,
  () => `http://user:pass@127.0.0.1:${fixturePort}/image.png`,
];

async function upscale(imageUrl: string) {
  return rawRequest(service.port, "POST", "/api/v1/tools/upscale", { "content-type": "application/json", authorization: `Bearer ${key}` }, JSON.stringify({ imageUrl, scale: 2, model: "lanczos" }));
}
async function replaceWith(replacement: string) {
  return rawRequest(service.port, "POST", "/api/v1/tools/background-remove", { "content-type": "application/json", authorization: `Bearer ${key}` }, JSON.stringify({ imageUrl: dataUrl(png), replacement }));
}

describe("SSRF", () => {
  it("fetches the allow-listed fixture, directly and through 3 redirects (the suite's control)", async () => {
    expect((await upscale(`http://127.0.0.1:${fixturePort}/image.png`)).status).toBe(200);
    expect((await upscale(`http://localhost:${fixturePort}/hop/2/${encodeURIComponent("/image.png")}`)).status).toBe(200);
  });

  it("refuses every forbidden address on imageUrl, 4xx and fast", async () => {
    for (const url of DIRECT.map((make) => make())) {
      const answer = await upscale(url);
      expect({ url, status: answer.status, code: errorCodeOf(answer.body) }).toMatchObject({ url, status: expect.toSatisfy((s: number) => s >= 400 && s < 500) });
      expect(answer.ms).toBeLessThan(3000);
    }
  });

  it("refuses every forbidden target at the end of 0 to 2 redirects from the allow-listed fixture", async () => {
    for (const target of REDIRECTED.map((make) => make())) {
      for (const hops of [0, 2]) {
        const url = `http://127.0.0.1:${fixturePort}/hop/${hops}/${encodeURIComponent(target)}`;
        const answer = await upscale(url);
        expect({ target, hops, status: answer.status }).toMatchObject({ target, hops, status: expect.toSatisfy((s: number) => s >= 400 && s < 500) });
      }
    }
  });

  it("refuses a chain longer than the redirect limit without following it", async () => {
    const answer = await upscale(`http://127.0.0.1:${fixturePort}/hop/5/${encodeURIComponent("/image.png")}`);
    expect([answer.status, errorCodeOf(answer.body)]).toEqual([502, "SOURCE_FETCH_FAILED"]);
  });

  it("applies the same policy to replacement image URLs (answers before any model is needed)", async () => {
    for (const url of [DIRECT[0]!(), DIRECT[13]!(), `http://127.0.0.1:${fixturePort}/hop/1/${encodeURIComponent(DIRECT[0]!())}`]) {
      const answer = await replaceWith(url);
      expect({ url, status: answer.status }).toMatchObject({ url, status: expect.toSatisfy((s: number) => s < 500 || errorCodeOf(answer.body) === "MODEL_NOT_INSTALLED") });
    }
  });

  it("never connected to the forbidden listener", () => {
    expect(forbidden.connections()).toBe(0);
  });
});
