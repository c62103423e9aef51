/**
 * Security review, item 11: image and webhook URLs on names that are local by definition
 * (`localhost.`, `foo.localhost`, `ip6-localhost`, ...) made the service ask the system resolver.
 * They are refused before any lookup, by one rule for both (server/image-source/outbound-target.ts),
 * unless an allow-list entry names them.
 *
 * In this process, the system resolver (`dns.lookup`) is watched while both paths refuse each name.
 * End to end, the whole service runs in its own network namespace whose only resolver is a stub that
 * records every query (needs root and unshare(1), as finding 3's test): it must ask for nothing but
 * the two public-looking names it was sent.
 */
import { execFile, execFileSync } from "node:child_process";
import dns from "node:dns";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AtelierError } from "../../../core/errors.js";
import { assertTargetAllowed, DeliveryRefused } from "../../../jobs/webhooks/webhook-request.js";
import { AddressPolicy } from "../../../server/image-source/address-policy.js";
import { fetchImage } from "../../../server/image-source/fetch-image.js";
import { testTempDir } from "../../support/temp-dir.js";

const LOCAL_NAMES = [
  "localhost.",
  "foo.localhost",
  "foo.localhost.",
  "ip6-localhost",
  "ip6-loopback",
  "intranet",
  "printer.local",
  "metadata.google.internal",
  "nas.home.arpa",
  "app.test",
  "nothing.invalid",
  "hidden.onion",
  "files.corp",
];

const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64");
const options = (allow: string[] = []) => ({ maxBytes: 1 << 20, timeoutMs: 2000, maxRedirects: 3, addressPolicy: new AddressPolicy(allow) });

afterEach(() => vi.restoreAllMocks());

describe("security item 11: local and special-use names, in process", () => {
  it.each(LOCAL_NAMES)("refuses %s for images and webhooks without asking the resolver", async (name) => {
    const lookup = vi.spyOn(dns, "lookup");
    const image = await fetchImage(`http://${name}/cat.png`, options()).catch((error: unknown) => error);
    expect(image).toBeInstanceOf(AtelierError);
    expect(image).toMatchObject({ code: "INVALID_IMAGE_URL", message: expect.stringMatching(/a local or special-use host name/) });
    expect(() => assertTargetAllowed(new URL(`http://${name}/hook`), new AddressPolicy())).toThrow(DeliveryRefused);
    expect(() => assertTargetAllowed(new URL(`http://${name}/hook`), new AddressPolicy())).toThrow(/a local or special-use host name/);
    expect(lookup).not.toHaveBeenCalled();
  });

  it("asks the resolver for other names (the watch sees lookups)", async () => {
    const lookup = vi.spyOn(dns, "lookup");
    const failed = await fetchImage("http://asked-for.example/cat.png", options()).catch((error: unknown) => error);
    expect(failed).toMatchObject({ code: "SOURCE_FETCH_FAILED" });
    expect(lookup).toHaveBeenCalledWith("asked-for.example", expect.anything(), expect.any(Function));
    expect(() => assertTargetAllowed(new URL("http://asked-for.example/hook"), new AddressPolicy())).not.toThrow();
  });

  it("reaches a local name that an allow-list entry names, on the entry's port", async () => {
    const server = http.createServer((_req, res) => res.writeHead(200, { "content-type": "image/png" }).end(PNG));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      expect((await fetchImage(`http://localhost:${port}/a.png`, options([`localhost:${port}`]))).bytes.equals(PNG)).toBe(true);
      await expect(fetchImage(`http://localhost:${port}/a.png`, options([`localhost:${port + 1}`]))).rejects.toMatchObject({ code: "INVALID_IMAGE_URL" });
      expect(() => assertTargetAllowed(new URL(`http://localhost:${port}/hook`), new AddressPolicy([`localhost:${port}`]))).not.toThrow();
      expect(() => assertTargetAllowed(new URL(`http://localhost:${port}/hook`), new AddressPolicy([`localhost:${port + 1}`]))).toThrow(DeliveryRefused);
    } finally {
      server.close();
    }
  });
});

function unshareOrFail(): void {
  try {
    execFileSync("unshare", ["--net", "--mount", "true"], { stdio: "ignore" });
  } catch (error) {
    throw new Error(`security item 11's end-to-end test needs root and unshare(1) (util-linux): ${(error as Error).message}`);
  }
}

describe("security item 11: local and special-use names, end to end", () => {
  it("the service asks its resolver for no local or special-use name, on image or webhook URLs", async () => {
    unshareOrFail();
    const resolvConf = path.join(testTempDir("dns"), "resolv.conf");
    fs.writeFileSync(resolvConf, "nameserver 127.0.0.1\noptions attempts:1 timeout:1\n");
    const child = path.resolve("test/hostile/support/local-names-service.ts");
    const env: NodeJS.ProcessEnv = { ...process.env, LOCAL_NAMES: JSON.stringify(LOCAL_NAMES) };
    const script = `ip link set lo up && mount --bind "$1" /etc/resolv.conf && exec "$2" --import tsx "$3"`;
    const output = await new Promise<string>((resolve, reject) =>
      execFile("unshare", ["--net", "--mount", "bash", "-c", script, "ns", resolvConf, process.execPath, child], { env, timeout: 90_000 }, (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
      ),
    );
    const report = JSON.parse(output.trim().split("\n").at(-1)!) as {
      images: Record<string, { status: number; message: string }>;
      webhooks: Record<string, { status: number; message: string }>;
      queries: string[];
    };
    // The stub answers NXDOMAIN: the image is a 502 and the webhook is accepted, then fails to
    // resolve. That they were asked for proves the stub sees the service's lookups.
    expect(report.images["asked-for.example"]!.status).toBe(502);
    expect(report.webhooks["hook-asked.example"]!.status).toBe(202);
    expect([...new Set(report.queries)].sort()).toEqual(["asked-for.example", "hook-asked.example"]);
    for (const name of LOCAL_NAMES) {
      expect({ name, ...report.images[name] }).toMatchObject({ name, status: 400, message: expect.stringMatching(/a local or special-use host name/) });
      expect({ name, ...report.webhooks[name] }).toMatchObject({ name, status: 400, message: expect.stringMatching(/^Invalid request: webhookUrl: .* is a local or special-use host name/) });
    }
  }, 120_000);
});
