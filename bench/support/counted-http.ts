/**
 * An HTTP client for benches whose clients share the cores with what they measure: it counts an
 * answer's bytes and keeps only its first characters (for error messages), never concatenating or
 * parsing the body, so the client's own work stays a small part of a call's CPU. fetch reads a body
 * whole: for a 1 MP answer that is megabytes copied and collected per call, on the same cores.
 * Node's global agent keeps connections alive, as a real client's would.
 */
import http from "node:http";

export interface CountedAnswer {
  status: number;
  bytes: number;
  contentType: string;
  /** The answer's first 300 characters. */
  text: string;
}

/** The whole answer to `request`, counted and not parsed. */
function countedAnswer(request: http.ClientRequest): Promise<CountedAnswer> {
  return new Promise((resolve, reject) => {
    request.once("error", reject);
    request.once("response", (response) => {
      let bytes = 0;
      let head = "";
      response.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
        if (head.length < 300) head += chunk.toString("latin1", 0, 300);
      });
      response.once("error", reject);
      response.once("end", () => resolve({ status: response.statusCode ?? 0, bytes, contentType: String(response.headers["content-type"]), text: head }));
    });
  });
}

/** POSTs `body` as JSON to `url` and reads the whole answer (see {@link countedAnswer}). */
export function postCounted(url: string, body: Buffer | string, headers: Record<string, string> = {}): Promise<CountedAnswer> {
  const request = http.request(url, {
    method: "POST",
    headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...headers },
  });
  const answer = countedAnswer(request);
  request.end(body);
  return answer;
}

/** GETs `url` and reads the whole answer, as {@link postCounted}. */
export function getCounted(url: string, headers: Record<string, string> = {}): Promise<CountedAnswer> {
  return countedAnswer(http.get(url, { headers }));
}
