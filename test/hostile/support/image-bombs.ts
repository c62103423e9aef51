/** Hostile images made by code: vector amplification, decompression bombs, lying headers. */
import { deflateSync } from "node:zlib";
import sharp from "sharp";

/** An SVG of `levels` nested groups each `<use>`-ing the previous one 10 times: 10^levels shapes in a few hundred bytes. */
export function useAmplificationSvg(levels = 7): Buffer {
  const defs = [`<g id="l0"><rect width="1" height="1" fill="red"/></g>`];
  for (let level = 1; level <= levels; level++) {
    const uses = Array.from({ length: 10 }, (_, i) => `<use href="#l${level - 1}" x="${i}"/>`).join("");
    defs.push(`<g id="l${level}">${uses}</g>`);
  }
  return Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="4000" height="4000"><defs>${defs.join("")}</defs><use href="#l${levels}"/></svg>`);
}

/** A PNG that declares `width` x `height` and holds one compressed run of zeros: a pixel bomb of a few kB. */
export function pngBomb(width: number, height: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (data: Buffer) => {
    let c = 0xffffffff;
    for (const byte of data) c = crcTable[(c ^ byte) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc(body), body.length + 4);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 0; // greyscale
  // A megabyte of zeros at most is compressed: the declared size is what a decoder would allocate.
  const rows = deflateSync(Buffer.alloc(Math.min(1 << 20, height * (width + 1))), { level: 9 });
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", header), chunk("IDAT", rows), chunk("IEND", Buffer.alloc(0))]);
}

/** A small gradient encoded in each accepted format. */
export async function sampleInEveryFormat(): Promise<Record<string, Buffer>> {
  const base = () => sharp({ create: { width: 24, height: 16, channels: 3, background: { r: 200, g: 80, b: 20 } } });
  return {
    PNG: await base().png().toBuffer(),
    JPEG: await base().jpeg().toBuffer(),
    WebP: await base().webp().toBuffer(),
    GIF: await base().gif().toBuffer(),
    TIFF: await base().tiff().toBuffer(),
    AVIF: await base().avif().toBuffer(),
  };
}
