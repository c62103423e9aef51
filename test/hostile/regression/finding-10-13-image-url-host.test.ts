/**
 * Finding 10: garbage or 2001-character host names in imageUrl went to DNS and came back 502, and
 * imageUrl had no length cap: both are the client's mistake, a 400 before any lookup.
 * Finding 13: allow-listing `localhost` let a redirect reach any other port on it; an entry now
 * opens its own port, or without one the port of the client's URL.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AtelierError } from "../../../core/errors.js";
import { AddressPolicy } from "../../../server/image-source/address-policy.js";
import { fetchImage, MAX_IMAGE_URL_LENGTH, type FetchImageOptions } from "../../../server/image-source/fetch-image.js";

const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64");
const options = (allow: string[]): FetchImageOptions => ({ maxBytes: 1 << 20, timeoutMs: 2000, maxRedirects: 3, addressPolicy: new AddressPolicy(allow) });

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return "OK";
  } catch (error) {
    if (error instanceof AtelierError) return error.code;
    throw error;
  }
}

describe("finding 10: imageUrl host syntax and length", () => {
  const refused: [string, string][] = [
    ["a 2001-character host", `http://${"a".repeat(2001)}/x.png`],
    ["a 64-character label", `http://${"b".repeat(64)}.example/x.png`],
    ["an empty label", "http://a..example/x.png"],
    ["a label starting with a hyphen", "http://-bad.example/x.png"],
    ["a label ending with a hyphen", "http://bad-.example/x.png"],
    ["punctuation the URL parser keeps", "http://a!b$c.example/x.png"],
    ["a 254-character name", `http://${Array.from({ length: 51 }, () => "abcd").join(".")}.ab/x.png`],
    ["a URL over the length cap", `https://images.example/${"p".repeat(MAX_IMAGE_URL_LENGTH)}`],
  ];
  for (const [what, url] of refused) {
    it(`refuses ${what} as INVALID_IMAGE_URL (400), before any lookup`, async () => {
      expect(await codeOf(fetchImage(url, options([])))).toBe("INVALID_IMAGE_URL");
    });
  }

  it("keeps data URLs apart from the length cap", async () => {
    const padded = `data:image/png;base64,${PNG.toString("base64")}`;
    const large = `data:image/png;base64,${Buffer.alloc(MAX_IMAGE_URL_LENGTH * 2, 7).toString("base64")}`;
    expect(await codeOf(fetchImage(padded, options([])))).toBe("OK");
    expect(large.length).toBeGreaterThan(MAX_IMAGE_URL_LENGTH);
    expect(await codeOf(fetchImage(large, options([])))).toBe("OK");
  });
});

describe("finding 13: allow-list entries and ports", () => {
  let imagePort: number;
  let redirectPort: number;
  const servers: http.Server[] = [];
  const listen = async (handler: http.RequestListener) => {
    const server = http.createServer(handler);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return (server.address() as AddressInfo).port;
  };
  beforeAll(async () => {
    imagePort = await listen((_req, res) => res.writeHead(200, { "content-type": "image/png" }).end(PNG));
    redirectPort = await listen((req, res) => res.writeHead(302, { location: `http://localhost:${imagePort}${req.url}` }).end());
  });
  afterAll(() => servers.forEach((server) => server.close()));

  it("an entry without a port opens only the port of the client's URL: a redirect to another port is refused", async () => {
    expect(await codeOf(fetchImage(`http://localhost:${imagePort}/a.png`, options(["localhost"])))).toBe("OK");
    expect(await codeOf(fetchImage(`http://localhost:${redirectPort}/a.png`, options(["localhost"])))).toBe("INVALID_IMAGE_URL");
    expect(await codeOf(fetchImage(`http://127.0.0.1:${redirectPort}/a.png`, options(["127.0.0.1", "localhost"])))).toBe("INVALID_IMAGE_URL");
  });

  it("an entry with a port opens that port only", async () => {
    expect(await codeOf(fetchImage(`http://localhost:${redirectPort}/a.png`, options([`localhost:${redirectPort}`, `localhost:${imagePort}`])))).toBe("OK");
    expect(await codeOf(fetchImage(`http://localhost:${redirectPort}/a.png`, options([`localhost:${redirectPort}`])))).toBe("INVALID_IMAGE_URL");
    expect(await codeOf(fetchImage(`http://127.0.0.1:${imagePort}/a.png`, options([`127.0.0.1:${imagePort}`])))).toBe("OK");
    expect(await codeOf(fetchImage(`http://127.0.0.1:${imagePort}/a.png`, options([`127.0.0.0/8:${redirectPort}`])))).toBe("INVALID_IMAGE_URL");
    expect(await codeOf(fetchImage(`http://127.0.0.1:${imagePort}/a.png`, options([`127.0.0.0/8:${imagePort}`])))).toBe("OK");
  });

  it("parses ports on every entry form and refuses bad ones", () => {
    const policy = new AddressPolicy(["images.internal:8080", "[::1]:9000", "fd00::/8:443", "::1"]);
    expect(policy.allowsHostname("images.internal", 8080, 80)).toBe(true);
    expect(policy.allowsHostname("images.internal", 80, 80)).toBe(false);
    expect(policy.allowsAddress("::1", undefined, 9000, 80)).toBe(true);
    expect(policy.allowsAddress("fd00::5", undefined, 443, 80)).toBe(true);
    expect(policy.allowsAddress("fd00::5", undefined, 80, 80)).toBe(false);
    expect(() => new AddressPolicy(["localhost:0"])).toThrow(/port/);
    expect(() => new AddressPolicy(["localhost:99999"])).toThrow();
  });
});
