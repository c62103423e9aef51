/**
 * Large bodies in and out of the router a slice at a time: the request's long strings are
 * kept out of JSON.parse and put back, and JSON answers with long strings are written in slices;
 * both must mean exactly what one JSON.parse / res.json would.
 */
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Server } from "node:http";
import { decodeBase64, encodeBase64 } from "../../core/base64-slices.js";
import { isUtf8Around, JsonBodyScanner, longStringTexts, parseScannedJson } from "../../facade/json-body-scanner.js";
import crypto from "node:crypto";
import { sendImage, sendJson } from "../../facade/result-responses.js";

/** Parses `text` as the body reader does, its long strings made from pieces of `pieceBytes`. */
async function parseInChunks(text: string, longStringBytes: number, chunkBytes: number, pieceBytes = 5): Promise<unknown> {
  const body = Buffer.from(text);
  const scanner = new JsonBodyScanner(longStringBytes);
  for (let at = 0; at < body.length; at += chunkBytes) scanner.scan(body.subarray(at, at + chunkBytes));
  return parseScannedJson(body, 0, scanner.longStrings, await longStringTexts(body, scanner.longStrings, pieceBytes));
}

const isUtf8Strict = (bytes: Buffer) => {
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
};

/** What the scanner finds, one byte at a time: long strings without escapes or control characters, and the depth. */
function readByteByByte(body: Buffer, longStringBytes: number) {
  const spans: { start: number; end: number; ascii: boolean }[] = [];
  let [inString, escaping, plain, ascii, start, depth, maxDepth] = [false, false, true, true, 0, 0, 0];
  body.forEach((c, i) => {
    if (inString) {
      if (escaping) escaping = false;
      else if (c === 0x22) {
        inString = false;
        if (plain && i - start >= longStringBytes) spans.push({ start, end: i, ascii });
      } else if (c === 0x5c) [escaping, plain] = [true, false];
      else if (c < 0x20) plain = false;
      else if (c > 0x7f) ascii = false;
    } else if (c === 0x22) [inString, start, plain, ascii] = [true, i + 1, true, true];
    else if (c === 0x5b || c === 0x7b) maxDepth = Math.max(maxDepth, ++depth);
    else if (c === 0x5d || c === 0x7d) depth--;
  });
  return { spans, maxDepth };
}

describe("long strings kept out of JSON.parse", () => {
  const long = "A".repeat(300) + "é€😀" + "/+=".repeat(100);
  const cases: unknown[] = [
    { imageUrl: `data:image/png;base64,${long}`, scale: 2 },
    [long, { [long]: long, nested: [long, 1, null, "short"] }, long],
    long,
    { __proto__: long, other: "x" },
    { escaped: `${long}\n"\\${long}`, control: `${long}\u0001` },
  ];
  it.each(cases.map((value) => [JSON.stringify(value).slice(0, 40), value]))("%s parses as JSON.parse does", async (_name, value) => {
    const text = JSON.stringify(value);
    // Pieces of 1 to 5 bytes end inside multi-byte characters but for the boundary rule.
    for (const [chunkBytes, pieceBytes] of [[1, 1], [7, 2], [64, 3], [100_000, 5], [100_000, 1 << 20]] as const) {
      expect(await parseInChunks(text, 50, chunkBytes, pieceBytes)).toStrictEqual(JSON.parse(text));
    }
  });

  it("checks UTF-8 around the long ASCII strings as over the whole body", () => {
    const long = "A".repeat(100);
    // Bytes as written (latin1): valid UTF-8 (é, €), and bytes that are not, beside and inside long strings.
    const texts = [`["${long}", "\xc3\xa9"]`, `["${long}\xe2\x82\xac${long}"]`, `["${long}", "\xff"]`, `["\xc3", "${long}"]`, `["${long}\xe9${long}"]`, `["\xe2\x82", "${long}", "\xac"]`];
    const verdicts = texts.map((text) => {
      const body = Buffer.from(text, "latin1");
      const scanner = new JsonBodyScanner(50);
      scanner.scan(body);
      expect(isUtf8Around(body, scanner.longStrings)).toBe(isUtf8Strict(body));
      return isUtf8Strict(body);
    });
    expect(verdicts).toEqual([true, true, false, false, false, false]);
  });

  it("keeps a \"__proto__\" key an own property", async () => {
    const parsed = await parseInChunks(`{"__proto__": "${"x".repeat(100)}", "a": {"__proto__": 1}}`, 50, 9) as Record<string, unknown>;
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.hasOwn(parsed, "__proto__")).toBe(true);
  });

  it("finds only strings without escapes and control characters, and the nesting depth", () => {
    const scanner = new JsonBodyScanner(10);
    scanner.scan(Buffer.from(`[[{"a": "${"y".repeat(20)}", "b": "${"z".repeat(9)}", "c": "${"w".repeat(12)}\\n", "d": "\\"${"v".repeat(20)}"}]]`));
    expect(scanner.longStrings).toHaveLength(1);
    expect(scanner.maxDepth).toBe(3);
  });

  it("finds the same long strings and depth as a byte-by-byte reading, whatever the chunks and their alignment", () => {
    // The scanner reads four bytes at once where it can: quotes, backslashes, control characters and
    // bytes over 0x7f at every position of a word, in chunks starting at every offset of a word.
    const special = [0x22, 0x5c, 0x00, 0x0a, 0x1f, 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7b, 0x7d, 0x7f, 0x80, 0xc3, 0xff];
    let state = 19;
    // xorshift32: the same cases on every run.
    const random = (below: number) => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return (state >>> 0) % below;
    };
    for (let trial = 0; trial < 300; trial++) {
      const parts: string[] = [];
      for (let k = 0; k < 1 + random(4); k++) parts.push(`"${"Qz09+/".repeat(5 + random(40))}"`);
      const body = Buffer.from(`[${parts.join(",")}]`, "latin1");
      for (let k = random(4); k > 0; k--) body[1 + random(body.length - 2)] = special[random(special.length)]!;
      const offset = random(4);
      const held = Buffer.alloc(body.length + offset);
      body.copy(held, offset);
      const scanner = new JsonBodyScanner(20);
      const chunkBytes = 1 + random(70);
      for (let at = 0; at < body.length; at += chunkBytes) scanner.scan(held.subarray(offset + at, offset + Math.min(at + chunkBytes, body.length)));
      expect({ spans: scanner.longStrings, maxDepth: scanner.maxDepth }).toEqual(readByteByByte(body, 20));
    }
  });

  it("refuses what JSON.parse refuses", async () => {
    for (const text of [`{"a": "${"x".repeat(100)}" "b": 1}`, `["${"x".repeat(100)}\u0001"]`, `{"a": "${"x".repeat(100)}",}`]) {
      await expect(parseInChunks(text, 50, 13)).rejects.toThrow(SyntaxError);
    }
  });
});

describe("base64 a slice at a time", () => {
  it("encodes and decodes as Buffer does, across slice boundaries", async () => {
    for (const length of [0, 1, 2, 3, 393_215, 393_216, 393_217, 1_000_001]) {
      const bytes = Buffer.from(Array.from({ length }, (_, i) => (i * 7919) % 251));
      const text = await encodeBase64(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length));
      expect(text).toBe(bytes.toString("base64"));
      expect((await decodeBase64(text)).equals(bytes)).toBe(true);
      expect((await decodeBase64(`data:x;base64,${text}`, "data:x;base64,".length)).equals(bytes)).toBe(true);
    }
  });
});

describe("JSON answers written in slices", () => {
  let server: Server;
  let url: string;
  const bodies: unknown[] = [
    { data: [{ url: `data:image/png;base64,${"QUJD".repeat(300_000)}`, width: 1 }], steps: ["a"] },
    { text: `${"é😀\"\\\n\u2028".repeat(200_000)}`, n: 1 },
    { small: "x" },
  ];
  beforeAll(async () => {
    const app = express();
    app.get("/streamed/:index", (req, res) => void sendJson(res, 200, bodies[Number(req.params.index)]));
    app.get("/plain/:index", (req, res) => void res.status(200).json(bodies[Number(req.params.index)]));
    // The answer as the procedure returns it (stand-ins in `url`), and as res.json would send it with the data URLs.
    app.get("/kept/:index", (req, res) => void sendJson(res, 200, keptBodies[Number(req.params.index)]!.body, keptBodies[Number(req.params.index)]!.images));
    app.get("/kept-plain/:index", (req, res) => void res.status(200).json(keptBodies[Number(req.params.index)]!.plain));
    app.get("/kept-raw/:index", (req, res) => void sendImage(res, keptBodies[Number(req.params.index)]!.body, keptBodies[Number(req.params.index)]!.images));
    server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    const address = server.address() as { port: number };
    url = `http://127.0.0.1:${address.port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  // Answers whose images come as bytes (RequestContext.keepImage), a stand-in in their url: sizes
  // around a slice's boundary (a multiple of 3 bytes or not), two images, a stand-in for no image
  // of this answer, and a data URL beside unrelated kept images.
  const image = (bytes: number) => ({ bytes: crypto.randomBytes(bytes), mimeType: "image/png" });
  const dataUrl = (kept: { bytes: Uint8Array; mimeType: string }) => `data:${kept.mimeType};base64,${Buffer.from(kept.bytes).toString("base64")}`;
  const [one, two, three] = [image(393_216), image(1_000_001), image(300_000)];
  const standIn = (index: number) => `atelier-kept-image:test-${index}`;
  const images = new Map([one, two, three].map((kept, index) => [standIn(index), kept]));
  type Entry = { url: string; mimeType: string; width: number; height: number };
  const entry = (index: number): Entry => ({ url: standIn(index), mimeType: "image/png", width: 3, height: 2 });
  const answer = (body: { data: Entry[] } & Record<string, unknown>) => ({
    body,
    images,
    plain: { ...body, data: body.data.map((item) => ({ ...item, url: images.has(item.url) ? dataUrl(images.get(item.url)!) : item.url })) },
  });
  const keptBodies = [
    answer({ id: "a", data: [entry(0)], steps: ["x"] }),
    answer({ id: "b", data: [entry(1), entry(2)], model: "m" }),
    answer({ id: "c", data: [{ ...entry(2), url: dataUrl(one) }], note: standIn(9) }),
  ];

  it.each(keptBodies.map((_, index) => [index]))("answer %i with kept images: the same bytes and headers as res.json, and as the raw image", async (index) => {
    const [kept, plain, raw] = await Promise.all([fetch(`${url}/kept/${index}`), fetch(`${url}/kept-plain/${index}`), fetch(`${url}/kept-raw/${index}`)]);
    expect(kept.headers.get("content-type")).toBe(plain.headers.get("content-type"));
    expect(kept.headers.get("content-length")).toBe(plain.headers.get("content-length"));
    expect(Buffer.from(await kept.arrayBuffer()).equals(Buffer.from(await plain.arrayBuffer()))).toBe(true);
    const first = keptBodies[index]!.plain.data[0]!;
    expect(raw.headers.get("content-type")).toBe(first.url.slice("data:".length, first.url.indexOf(";")));
    expect(Buffer.from(await raw.arrayBuffer()).equals(Buffer.from(first.url.slice(first.url.indexOf(",") + 1), "base64"))).toBe(true);
  });

  it.each(bodies.map((_, index) => [index]))("body %i: the same bytes and headers as res.json", async (index) => {
    const [streamed, plain] = await Promise.all([fetch(`${url}/streamed/${index}`), fetch(`${url}/plain/${index}`)]);
    expect(streamed.headers.get("content-type")).toBe(plain.headers.get("content-type"));
    expect(streamed.headers.get("content-length")).toBe(plain.headers.get("content-length"));
    expect(Buffer.from(await streamed.arrayBuffer()).equals(Buffer.from(await plain.arrayBuffer()))).toBe(true);
  });
});
