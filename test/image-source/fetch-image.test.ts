import http from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterEach, describe, it, expect } from "vitest";
import { AtelierError, type ErrorCode } from "../../core/errors.js";
import { AddressPolicy } from "../../server/image-source/address-policy.js";
import {
  fetchImage,
  fetchImageOptionsFromConfig,
  type FetchImageOptions,
} from "../../server/image-source/fetch-image.js";

/** A 1x1 transparent PNG. */
const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
const PNG = Buffer.from(PNG_BASE64, "base64");

function options(overrides: Partial<FetchImageOptions> & { allow?: string[] } = {}): FetchImageOptions {
  const { allow = [], ...rest } = overrides;
  return { maxBytes: 64 * 1024, timeoutMs: 3000, maxRedirects: 3, addressPolicy: new AddressPolicy(allow), ...rest };
}

/** Awaits a fetch that must fail and returns its AtelierError, checking code and message. */
async function failure(promise: Promise<unknown>, code: ErrorCode, message?: RegExp): Promise<AtelierError> {
  let error: unknown;
  try {
    await promise;
  } catch (caught) {
    error = caught;
  }
  expect(error, "the fetch should have failed").toBeInstanceOf(AtelierError);
  const atelierError = error as AtelierError;
  expect({ code: atelierError.code, message: atelierError.message }).toMatchObject({
    code,
    ...(message ? { message: expect.stringMatching(message) } : {}),
  });
  return atelierError;
}

// ---------------------------------------------------------------------------------------------
// Test servers on 127.0.0.1, closed after every test.

interface TestServer {
  port: number;
  /** Requests received so far. */
  requests: http.IncomingMessage[];
  url(path?: string): string;
}

const openServers: http.Server[] = [];

afterEach(async () => {
  const servers = openServers.splice(0);
  await Promise.all(
    servers.map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

async function startServer(
  handler: (request: http.IncomingMessage, response: http.ServerResponse, server: TestServer) => void,
): Promise<TestServer> {
  const requests: http.IncomingMessage[] = [];
  const server = http.createServer();
  openServers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const testServer: TestServer = { port, requests, url: (path = "/") => `http://127.0.0.1:${port}${path}` };
  server.on("request", (request, response) => {
    requests.push(request);
    handler(request, response, testServer);
  });
  return testServer;
}

const servePng = (_request: http.IncomingMessage, response: http.ServerResponse): void => {
  response.writeHead(200, { "Content-Type": "image/png", "Content-Length": PNG.length });
  response.end(PNG);
};

// ---------------------------------------------------------------------------------------------

describe("fetchImage: refused URLs", () => {
  const privateTargets: [url: string, shownAddress: string][] = [
    ["http://127.0.0.1/", "127.0.0.1"],
    ["http://127.1/", "127.0.0.1"],
    ["http://2130706433/", "127.0.0.1"],
    ["http://0x7f000001/", "127.0.0.1"],
    ["http://0x7f.1/", "127.0.0.1"],
    ["http://0177.0.0.1/", "127.0.0.1"],
    ["https://127.0.0.1:8443/image.png", "127.0.0.1"],
    ["http://0.0.0.0/", "0.0.0.0"],
    ["http://10.0.0.1/", "10.0.0.1"],
    ["http://172.16.0.1/", "172.16.0.1"],
    ["http://192.168.1.1/", "192.168.1.1"],
    ["http://169.254.169.254/latest/meta-data/", "169.254.169.254"],
    ["http://100.64.0.1/", "100.64.0.1"],
    ["http://224.0.0.1/", "224.0.0.1"],
    ["http://255.255.255.255/", "255.255.255.255"],
    ["http://[::1]/", "::1"],
    ["http://[::]/", "::"],
    ["http://[::ffff:127.0.0.1]/", "::ffff:7f00:1"],
    ["http://[::ffff:7f00:1]/", "::ffff:7f00:1"],
    ["http://[64:ff9b::7f00:1]/", "64:ff9b::7f00:1"],
    ["http://[2002:7f00:1::]/", "2002:7f00:1::"],
    ["http://[fc00::1]/", "fc00::1"],
    ["http://[fe80::1]/", "fe80::1"],
  ];

  it.each(privateTargets)("refuses %s", async (url, shown) => {
    const error = await failure(fetchImage(url, options()), "INVALID_IMAGE_URL");
    expect(error.message).toBe(
      `imageUrl resolves to a private or reserved address (${shown}), which this server does not fetch.`,
    );
  });

  const localNames: [url: string, shownName: string][] = [
    ["http://localhost/", "localhost"],
    ["http://LOCALHOST:8080/x.png", "localhost"],
    ["http://printer.local/", "printer.local"],
  ];
  it.each(localNames)("refuses the local name of %s", async (url, shown) => {
    const error = await failure(fetchImage(url, options()), "INVALID_IMAGE_URL");
    expect(error.message).toBe(`imageUrl names "${shown}", a local or special-use host name (localhost, .local, .internal, ...), which this server does not fetch.`);
  });

  const otherSchemes = [
    "file:///etc/passwd",
    "ftp://example.com/a.png",
    "gopher://example.com/",
    "javascript:alert(1)",
    "ws://example.com/",
  ];
  it.each(otherSchemes)("refuses the scheme of %s", async (url) => {
    const namesSchemes = /must be an http:, https: or data: URL \(got "[a-z]+:"\)/;
    await failure(fetchImage(url, options()), "INVALID_IMAGE_URL", namesSchemes);
  });

  it.each(["not a url", "/relative/image.png", "http://", ""])("refuses the malformed URL %j", async (url) => {
    await failure(fetchImage(url, options()), "INVALID_IMAGE_URL", /not a valid absolute URL/);
  });

  it.each(["http://user:secret@example.com/a.png", "https://user@example.com/a.png", "http://:pw@example.com/"])(
    "refuses credentials in %s",
    async (url) => {
      await failure(fetchImage(url, options()), "INVALID_IMAGE_URL", /must not contain credentials/);
    },
  );
});

describe("fetchImage: data URLs", () => {
  it("decodes a base64 PNG", async () => {
    const image = await fetchImage(`data:image/png;base64,${PNG_BASE64}`, options());
    expect(image).toEqual({ bytes: PNG, contentType: "image/png", source: "data" });
  });

  it("accepts parameters, upper case and wrapped base64", async () => {
    const wrapped = PNG_BASE64.replace(/(.{20})/g, "$1\n");
    const image = await fetchImage(`DATA:Image/PNG;name=x.png;BASE64,${wrapped}`, options());
    expect(image.bytes.equals(PNG)).toBe(true);
    expect(image.contentType).toBe("image/png");
  });

  it("refuses a non-image media type", async () => {
    await failure(
      fetchImage(`data:text/html;base64,${Buffer.from("<script>").toString("base64")}`, options()),
      "INVALID_IMAGE_URL",
      /image media type such as image\/png \(got "text\/html"\)/,
    );
    await failure(fetchImage(`data:;base64,${PNG_BASE64}`, options()), "INVALID_IMAGE_URL", /got none/);
  });

  it("refuses a data URL that is not base64", async () => {
    await failure(fetchImage("data:image/svg+xml,<svg/>", options()), "INVALID_IMAGE_URL", /must be base64-encoded/);
    await failure(fetchImage("data:image/png;base64", options()), "INVALID_IMAGE_URL", /without a payload/);
  });

  it("refuses a malformed or empty base64 payload", async () => {
    await failure(fetchImage("data:image/png;base64,@@@@", options()), "INVALID_IMAGE_URL", /not valid base64/);
    await failure(fetchImage("data:image/png;base64,AAAAA", options()), "INVALID_IMAGE_URL", /not valid base64/);
    await failure(fetchImage("data:image/png;base64,", options()), "INVALID_IMAGE_URL", /no image bytes/);
  });

  it("refuses a payload over maxBytes, judged by its base64 length", async () => {
    const exact = Buffer.alloc(300).toString("base64");
    expect((await fetchImage(`data:image/png;base64,${exact}`, options({ maxBytes: 300 }))).bytes).toHaveLength(300);

    const over = Buffer.alloc(301).toString("base64");
    await failure(
      fetchImage(`data:image/png;base64,${over}`, options({ maxBytes: 300 })),
      "IMAGE_TOO_LARGE",
      /larger than the limit of 300 bytes/,
    );
    // Garbage after a too-long prefix: refused for size, so the payload was never decoded.
    const garbage = `${"A".repeat(1000)}!!!`;
    await failure(fetchImage(`data:image/png;base64,${garbage}`, options({ maxBytes: 300 })), "IMAGE_TOO_LARGE");
  });
});

describe("fetchImage: data URLs decoded by the base64 decoder's own count", () => {
  /** The outcome as the checks before the fast path judged it: whitespace stripped, a regular expression over the payload. */
  function reference(url: string, maxBytes: number): { bytes: Buffer } | { code: string } {
    const payload = url.slice(url.indexOf(",") + 1).replace(/\s+/g, "");
    const padding = payload.endsWith("==") ? 2 : payload.endsWith("=") ? 1 : 0;
    const decoded = Math.floor((payload.length * 3) / 4) - padding;
    if (decoded > maxBytes) return { code: "IMAGE_TOO_LARGE" };
    if (decoded <= 0) return { code: "INVALID_IMAGE_URL" };
    const badLength = payload.length % 4 === 1 || (padding > 0 && payload.length % 4 !== 0);
    if (badLength || /[^A-Za-z0-9+/]/.test(payload.slice(0, payload.length - padding))) return { code: "INVALID_IMAGE_URL" };
    return { bytes: Buffer.from(payload, "base64") };
  }
  const outcome = (promise: Promise<{ bytes: Buffer }>) =>
    promise.then(
      (image) => ({ bytes: image.bytes }),
      (error: AtelierError) => ({ code: error.code }),
    );
  const body = Buffer.from(Array.from({ length: 1500 }, (_, i) => (i * 31) % 256)).toString("base64");
  const payloads = [
    body,
    body.slice(0, -2),
    `${body.slice(0, 100)}=${body.slice(101)}`,
    `${body.slice(0, 100)}-${body.slice(101)}`,
    `${body.slice(0, 100)}_${body.slice(101)}`,
    `${body.slice(0, 100)}!${body.slice(101, -1)}`,
    `${body.slice(0, 100)} ${body.slice(100, -1)}`,
    `${body.slice(0, 100)}\u0141${body.slice(101)}`,
    `${body.slice(0, 100)}\u00e9${body.slice(101, -1)}`,
    `${body}=`,
    `${body}==`,
    `${body.slice(0, -4)}QR==`,
    `${body.slice(0, -4)}QUI=`,
    `${body.slice(0, -4)}Q===`,
    "QQ",
    "QUI",
    "=",
    "====",
  ];

  it.each(payloads.map((payload, index) => [index, payload]))("payload %i: the same outcome as the full checks, from the string and from its bytes", async (_index, payload) => {
    const url = `data:image/png;base64,${payload}`;
    for (const maxBytes of [64 * 1024, 1000]) {
      const expected = reference(url, maxBytes);
      expect(await outcome(fetchImage(url, options({ maxBytes })))).toEqual(expected);
      // An ASCII URL's bytes, as the facade keeps a body's long strings; never read otherwise.
      if (!/[^\x00-\x7f]/.test(url)) expect(await outcome(fetchImage("data:image/gif;base64,R0lGODlh", options({ maxBytes }), undefined, Buffer.from(url, "latin1")))).toEqual(expected);
    }
  });

  it("decodes from the bytes only what trim() would leave as it is", async () => {
    const url = `data:image/png;base64,${PNG_BASE64}`;
    expect((await fetchImage("unused", options(), undefined, Buffer.from(url))).bytes.equals(PNG)).toBe(true);
    // A leading space: the string is read (and trimmed) instead.
    expect((await fetchImage(` ${url}`, options(), undefined, Buffer.from(` data:image/png;base64,AAAA`))).bytes.equals(PNG)).toBe(true);
  });
});

describe("fetchImage: HTTP sources", () => {
  it("fetches bytes and content type from an allow-listed address", async () => {
    const server = await startServer(servePng);
    for (const allow of [["127.0.0.1"], ["127.0.0.1/32"], ["10.0.0.0/8", "127.0.0.0/8"]]) {
      const image = await fetchImage(server.url("/pixel.png?size=1"), options({ allow }));
      expect(image).toEqual({ bytes: PNG, contentType: "image/png", source: "http" });
    }
    const request = server.requests[0];
    expect(request?.url).toBe("/pixel.png?size=1");
    expect(request?.headers).toMatchObject({
      "user-agent": "Atelier-ImageFetcher/1",
      accept: "image/*",
      "accept-encoding": "identity",
    });
    expect(request?.headers.cookie).toBeUndefined();
    expect(request?.headers.authorization).toBeUndefined();
  });

  it("returns the body as sent, without decompressing it", async () => {
    const gzipped = gzipSync(PNG);
    const server = await startServer((_request, response) => {
      response.writeHead(200, { "Content-Type": "image/png", "Content-Encoding": "gzip" });
      response.end(gzipped);
    });
    const image = await fetchImage(server.url(), options({ allow: ["127.0.0.1"] }));
    expect(image.bytes.equals(gzipped)).toBe(true);
  });

  it("reports a missing content type as undefined", async () => {
    const server = await startServer((_request, response) => response.end(PNG));
    expect((await fetchImage(server.url(), options({ allow: ["127.0.0.1"] }))).contentType).toBeUndefined();
  });

  it("refuses the same loopback server without the allow-list, before any request", async () => {
    const server = await startServer(servePng);
    await failure(
      fetchImage(server.url(), options()),
      "INVALID_IMAGE_URL",
      /private or reserved address \(127\.0\.0\.1\)/,
    );
    await failure(
      fetchImage(`http://localhost:${server.port}/`, options()),
      "INVALID_IMAGE_URL",
      /imageUrl names "localhost", a local or special-use host name/,
    );
    expect(server.requests).toHaveLength(0);
  });

  it("fetches through an allow-listed hostname whatever it resolves to", async () => {
    const server = await startServer(servePng);
    const image = await fetchImage(`http://localhost:${server.port}/a.png`, options({ allow: ["localhost"] }));
    expect(image.bytes.equals(PNG)).toBe(true);
    // The name entry does not open the address to other names.
    await failure(fetchImage(server.url(), options({ allow: ["localhost"] })), "INVALID_IMAGE_URL");
  });

  it("builds options from the configuration", async () => {
    const server = await startServer(servePng);
    const fromConfig = fetchImageOptionsFromConfig({
      images: { maxBytes: 1024, maxInputPixels: 1, maxOutputPixels: 1 },
      fetch: { timeoutMs: 2000, maxRedirects: 0, allowedPrivateHosts: ["127.0.0.1/32"] },
    });
    expect(fromConfig).toMatchObject({ maxBytes: 1024, timeoutMs: 2000, maxRedirects: 0 });
    expect((await fetchImage(server.url(), fromConfig)).bytes.equals(PNG)).toBe(true);
    expect(() =>
      fetchImageOptionsFromConfig({
        images: { maxBytes: 1024, maxInputPixels: 1, maxOutputPixels: 1 },
        fetch: { timeoutMs: 2000, maxRedirects: 0, allowedPrivateHosts: ["127.1"] },
      }),
    ).toThrow(/Invalid allowed private host "127\.1"/);
  });

  it("answers SOURCE_FETCH_FAILED for a non-2xx status", async () => {
    const server = await startServer((_request, response) => {
      response.writeHead(404, { "Content-Type": "text/plain" });
      response.end("internal detail that must not leak");
    });
    const error = await failure(
      fetchImage(server.url(), options({ allow: ["127.0.0.1"] })),
      "SOURCE_FETCH_FAILED",
      /source answered HTTP 404/,
    );
    expect(error.message).not.toMatch(/internal detail/);
  });

  it("answers SOURCE_FETCH_FAILED with a short message when the connection is refused", async () => {
    const server = await startServer(servePng);
    const url = server.url();
    const closing = openServers.pop();
    await new Promise<void>((resolve) => closing?.close(() => resolve()));
    const error = await failure(
      fetchImage(url, options({ allow: ["127.0.0.1"] })),
      "SOURCE_FETCH_FAILED",
      /^Could not fetch imageUrl from 127\.0\.0\.1: the connection was refused\.$/,
    );
    expect(error.cause).toMatchObject({ code: "ECONNREFUSED" });
  });

  it("answers SOURCE_FETCH_FAILED when the host name does not resolve", async () => {
    const error = await failure(fetchImage("http://no-such-host.example/a.png", options()), "SOURCE_FETCH_FAILED");
    expect(error.message).toMatch(/no-such-host\.example: the host name could not be resolved|timed out/);
  });

  it("answers SOURCE_FETCH_FAILED when TLS fails", async () => {
    const server = await startServer(servePng);
    const error = await failure(
      fetchImage(`https://127.0.0.1:${server.port}/`, options({ allow: ["127.0.0.1"] })),
      "SOURCE_FETCH_FAILED",
      /TLS connection could not be established/,
    );
    expect(error.message).not.toMatch(/SSL routines|openssl/i);
    expect(error.cause).toBeDefined();
  });

  it("answers SOURCE_FETCH_FAILED when the body is cut short", async () => {
    const server = await startServer((_request, response) => {
      response.writeHead(200, { "Content-Type": "image/png", "Content-Length": 1000 });
      response.write(PNG, () => response.socket?.destroy());
    });
    await failure(
      fetchImage(server.url(), options({ allow: ["127.0.0.1"] })),
      "SOURCE_FETCH_FAILED",
      /closed the connection before the image was complete/,
    );
  });
});

describe("fetchImage: redirects", () => {
  /** `/hop/N` redirects to `/hop/N-1` (cycling through every redirect status); `/hop/0` is the image. */
  async function startRedirectChain(): Promise<TestServer> {
    const statuses = [301, 302, 303, 307, 308];
    return startServer((request, response) => {
      const hops = Number(/^\/hop\/(\d+)$/.exec(request.url ?? "")?.[1] ?? "0");
      if (hops === 0) return servePng(request, response);
      // Relative and absolute Locations alike.
      const path = `/hop/${hops - 1}`;
      const location = hops % 2 === 0 ? path : `http://127.0.0.1:${response.socket?.localPort}${path}`;
      response.writeHead(statuses[hops % statuses.length] ?? 302, { Location: location });
      response.end("moved");
    });
  }

  it("follows a chain of maxRedirects redirects", async () => {
    const server = await startRedirectChain();
    const image = await fetchImage(server.url("/hop/3"), options({ allow: ["127.0.0.1"], maxRedirects: 3 }));
    expect(image.bytes.equals(PNG)).toBe(true);
    expect(server.requests.map((request) => request.url)).toEqual(["/hop/3", "/hop/2", "/hop/1", "/hop/0"]);
  });

  it("refuses one redirect more than maxRedirects", async () => {
    const server = await startRedirectChain();
    await failure(
      fetchImage(server.url("/hop/4"), options({ allow: ["127.0.0.1"], maxRedirects: 3 })),
      "SOURCE_FETCH_FAILED",
      /redirected more than 3 times/,
    );
    expect(server.requests).toHaveLength(4);
    await failure(
      fetchImage(server.url("/hop/1"), options({ allow: ["127.0.0.1"], maxRedirects: 0 })),
      "SOURCE_FETCH_FAILED",
      /redirected more than 0 times/,
    );
  });

  it.each([
    ["http://[::1]:PORT/", "::1"],
    ["http://127.0.0.2:PORT/", "127.0.0.2"],
    ["http://[::ffff:127.0.0.2]:PORT/", "::ffff:7f00:2"],
    ["http://169.254.169.254/latest/meta-data/", "169.254.169.254"],
  ])("refuses a redirect to %s, which is not allow-listed", async (target, shown) => {
    const server = await startServer((_request, response, self) => {
      response.writeHead(302, { Location: target.replace("PORT", String(self.port)) });
      response.end();
    });
    const error = await failure(fetchImage(server.url(), options({ allow: ["127.0.0.1"] })), "INVALID_IMAGE_URL");
    expect(error.message).toBe(
      `imageUrl redirects to a private or reserved address (${shown}), which this server does not fetch.`,
    );
  });

  it("does not extend an allow-listed hostname to the address a redirect names", async () => {
    const server = await startServer((request, response, self) => {
      if (request.url === "/image") return servePng(request, response);
      response.writeHead(307, { Location: `http://127.0.0.1:${self.port}/image` });
      response.end();
    });
    await failure(
      fetchImage(`http://localhost:${server.port}/`, options({ allow: ["localhost"] })),
      "INVALID_IMAGE_URL",
      /redirects to a private or reserved address \(127\.0\.0\.1\)/,
    );
    expect(server.requests.map((request) => request.url)).toEqual(["/"]);
  });

  it.each(["file:///etc/passwd", "ftp://example.com/a.png", "data:image/png;base64,AAAA", "http://u:p@example.com/"])(
    "refuses a redirect to %s",
    async (target) => {
      const server = await startServer((_request, response) => {
        response.writeHead(301, { Location: target });
        response.end();
      });
      const fetching = fetchImage(server.url(), options({ allow: ["127.0.0.1"] }));
      await failure(fetching, "INVALID_IMAGE_URL", /imageUrl redirects to/);
    },
  );

  it("answers SOURCE_FETCH_FAILED for a redirect without Location", async () => {
    const server = await startServer((_request, response) => {
      response.writeHead(302);
      response.end();
    });
    await failure(
      fetchImage(server.url(), options({ allow: ["127.0.0.1"] })),
      "SOURCE_FETCH_FAILED",
      /HTTP 302 without a Location header/,
    );
  });
});

describe("fetchImage: limits", () => {
  it("times out on a server that never answers", async () => {
    const server = await startServer(() => undefined);
    const started = Date.now();
    await failure(
      fetchImage(server.url(), options({ allow: ["127.0.0.1"], timeoutMs: 300 })),
      "SOURCE_FETCH_FAILED",
      /timed out after 300 ms/,
    );
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("times out on a body that stalls", async () => {
    const server = await startServer((_request, response) => {
      response.writeHead(200, { "Content-Type": "image/png" });
      response.write(PNG.subarray(0, 8));
    });
    await failure(
      fetchImage(server.url(), options({ allow: ["127.0.0.1"], timeoutMs: 300 })),
      "SOURCE_FETCH_FAILED",
      /timed out after 300 ms/,
    );
  });

  it("counts one time limit across every redirect hop", async () => {
    // Each hop alone is well inside the limit; together they are not.
    const server = await startServer((request, response) => {
      const hops = Number(/^\/hop\/(\d+)$/.exec(request.url ?? "")?.[1] ?? "0");
      setTimeout(() => {
        if (hops === 0) return servePng(request, response);
        response.writeHead(302, { Location: `/hop/${hops - 1}` });
        response.end();
      }, 200);
    });
    await failure(
      fetchImage(server.url("/hop/3"), options({ allow: ["127.0.0.1"], timeoutMs: 500 })),
      "SOURCE_FETCH_FAILED",
      /timed out after 500 ms/,
    );
  });

  it("stops reading an endless body at maxBytes and closes the connection", async () => {
    let sent = 0;
    let closed!: () => void;
    const connectionClosed = new Promise<void>((resolve) => (closed = resolve));
    const server = await startServer((_request, response) => {
      response.writeHead(200, { "Content-Type": "image/png" });
      const chunk = Buffer.alloc(16 * 1024, 0x41);
      const pump = (): void => {
        while (!response.destroyed && response.write(chunk)) sent += chunk.length;
      };
      response.on("drain", pump);
      response.on("close", closed);
      pump();
    });
    await failure(
      fetchImage(server.url(), options({ allow: ["127.0.0.1"], maxBytes: 64 * 1024, timeoutMs: 5000 })),
      "IMAGE_TOO_LARGE",
      /larger than the limit of 65536 bytes \(64 KiB\)/,
    );
    await connectionClosed;
    // Socket buffers hold a few MiB at most; an unbounded read would never have finished.
    expect(sent).toBeLessThan(64 * 1024 * 1024);
  });

  it("refuses a Content-Length over maxBytes before reading the body", async () => {
    const server = await startServer((_request, response) => {
      // Only the head is sent: a fetch that waited for the body would time out instead.
      response.writeHead(200, { "Content-Type": "image/png", "Content-Length": 1024 * 1024 + 1 });
      response.flushHeaders();
    });
    await failure(
      fetchImage(server.url(), options({ allow: ["127.0.0.1"], maxBytes: 1024 * 1024, timeoutMs: 5000 })),
      "IMAGE_TOO_LARGE",
      /larger than the limit of 1048576 bytes \(1 MiB\)/,
    );
  });

  it("answers CANCELLED when the caller aborts", async () => {
    const server = await startServer(() => undefined);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    await failure(
      fetchImage(server.url(), options({ allow: ["127.0.0.1"] }), controller.signal),
      "CANCELLED",
      /cancelled/,
    );
    await failure(fetchImage(server.url(), options({ allow: ["127.0.0.1"] }), AbortSignal.abort()), "CANCELLED");
  });
});
