/**
 * The least any server of the `/api/v1` image contract spends around the network on one call: a bare
 * node:http server that reads the JSON body, decodes the request's data URL to pixels (libvips, as
 * open-image.ts does), encodes the answer's pixels as the service does (the caller's encoder) and
 * answers them as a data URL in JSON, all in one go on one thread: no framework, authentication,
 * quota, router, queue, inference thread or network, and none of the service's care for the event loop.
 *
 * Called with the same client as the REST calls and in the same rounds, its time is what the contract
 * itself costs (JSON and base64 both ways, HTTP, the PNG codecs); REST minus the network minus this
 * floor is what the service adds. The answer is made from the request's decoded pixels, so a bench may
 * also run the network inside it, as a bare server of the contract around a bare session would.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import sharp from "sharp";
import type { RawImage } from "../../workers/image/raw-image.js";

export interface ContractFloor {
  /** Where it listens, for a bench's own client. */
  url: string;
  /** POSTs `body` as JSON (a string as it is) the way the bench's REST client does; resolves once the answer is parsed. */
  post(body: unknown): Promise<void>;
  close(): Promise<void>;
}

/** An encoding of the answer's pixels, made anew for each call as the service makes its own, from the request's decoded pixels. */
export type AnswerEncoder = (request: RawImage) => Promise<{ data: Uint8Array; mimeType: string }>;

/** Starts the floor server on a loopback port; each call answers with what `encodeAnswer` makes. */
export async function startContractFloor(encodeAnswer: AnswerEncoder): Promise<ContractFloor> {
  const server = http.createServer((request, response) => {
    const fail = (error: unknown) => {
      response.writeHead(500, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: String(error) }));
    };
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      void (async () => {
        const { imageUrl } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { imageUrl: string };
        const bytes = Buffer.from(imageUrl.slice(imageUrl.indexOf(",") + 1), "base64");
        const { data, info } = await sharp(bytes).toColourspace("srgb").raw().toBuffer({ resolveWithObject: true });
        const answer = await encodeAnswer({ data, width: info.width, height: info.height, channels: info.channels as RawImage["channels"] });
        const base64 = Buffer.from(answer.data.buffer, answer.data.byteOffset, answer.data.byteLength).toString("base64");
        const text = JSON.stringify({ created: Math.floor(Date.now() / 1000), data: [{ url: `data:${answer.mimeType};base64,${base64}` }] });
        response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
        response.end(text);
      })().catch(fail);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    url,
    async post(body) {
      const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) });
      const answered = (await response.json()) as { data?: unknown[] };
      if (response.status !== 200 || !answered.data) throw new Error(`contract floor: HTTP ${response.status} ${JSON.stringify(answered)}`);
    },
    close: () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
