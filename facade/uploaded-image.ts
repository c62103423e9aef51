/**
 * An image file of a multipart form made, as it arrives, into the data URL its JSON form would
 * carry (`data:image/png;base64,...`): the operations take images as URLs (their schemas, jobs,
 * idempotency fingerprints), so a file becomes exactly the request a client sending the data URL
 * makes, converted once. Both forms are built at once: the URL's ASCII bytes, which the router reads
 * (facade/body-strings.ts), and its text, joined from pieces without copying them into one string
 * (as the JSON reader makes long strings, json-body-scanner.ts).
 *
 * The file is encoded a piece at a time as its chunks come in, so no turn of the event loop encodes
 * more than a piece, and pieces are never tiny whatever size the client's chunks are (a rope of
 * millions of one-character strings would cost more than the image). The media type comes from the
 * file's signature, as the workers judge it (core/image-formats.ts); the part's own Content-Type is
 * not trusted.
 */
import { acceptedFormatOf, ACCEPTED_IMAGE_FORMAT_NAMES } from "../core/image-formats.js";
import { AtelierError } from "../core/errors.js";
import type { BodyString } from "./body-strings.js";

/** File bytes encoded per piece (a multiple of 3, so the pieces' base64 joins into the whole's). */
export const PIECE_BYTES = 48 * 1024;
/** The longest head a data URL here has (`data:image/jpeg;base64,`), with room to spare. */
const MAX_HEAD = 32;
/** The first capacity of the URL's bytes when the body's length is not known. */
const FIRST_CAPACITY = 1024 * 1024;

const base64Length = (bytes: number) => Math.ceil(bytes / 3) * 4;

export class UploadedImage {
  private readonly pending = Buffer.allocUnsafe(PIECE_BYTES);
  private filled = 0;
  private received = 0;
  private text = "";
  private bytes: Buffer;
  private length = 0;

  /**
   * @param part the form part's name, for messages.
   * @param maxFileBytes an upper bound of the file's size where one is known (the body's declared
   *   length), so the URL's bytes are laid out once; else they grow as needed.
   */
  constructor(
    private readonly part: string,
    maxFileBytes: number | undefined,
  ) {
    this.bytes = Buffer.allocUnsafe(maxFileBytes === undefined ? FIRST_CAPACITY : MAX_HEAD + base64Length(maxFileBytes));
  }

  /** Bytes of the file received so far. */
  get size(): number {
    return this.received;
  }

  write(chunk: Buffer): void {
    this.received += chunk.length;
    for (let at = 0; at < chunk.length; ) {
      const copied = chunk.copy(this.pending, this.filled, at);
      this.filled += copied;
      at += copied;
      if (this.filled === PIECE_BYTES) this.encodePending();
    }
  }

  /**
   * The data URL, once the file has ended.
   * @throws AtelierError IMAGE_UNDECODABLE for an empty file or one that is no image in an accepted format.
   */
  finish(): BodyString {
    if (this.filled > 0) this.encodePending();
    if (this.received === 0) throw new AtelierError("IMAGE_UNDECODABLE", `The file in part ${JSON.stringify(this.part)} is empty.`);
    return { text: this.text, bytes: this.bytes.subarray(0, this.length) };
  }

  private encodePending(): void {
    const raw = this.pending.subarray(0, this.filled);
    if (this.length === 0) this.append(`data:${this.mediaTypeOf(raw)};base64,`);
    this.append(raw.toString("base64"));
    this.filled = 0;
  }

  private mediaTypeOf(start: Buffer): string {
    const format = acceptedFormatOf(start);
    if (!format) {
      throw new AtelierError(
        "IMAGE_UNDECODABLE",
        `The file in part ${JSON.stringify(this.part)} is not an image in a format this server accepts (${ACCEPTED_IMAGE_FORMAT_NAMES}); SVG and other vector or document formats are refused.`,
      );
    }
    return format.mimeType;
  }

  private append(piece: string): void {
    if (this.length + piece.length > this.bytes.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.length + piece.length));
      this.bytes.copy(grown, 0, 0, this.length);
      this.bytes = grown;
    }
    this.length += this.bytes.write(piece, this.length, "latin1");
    this.text += piece;
  }
}
