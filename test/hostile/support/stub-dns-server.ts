/**
 * A DNS server on a UDP port that records every name it is asked for and answers NXDOMAIN: pointed at
 * by a resolv.conf, it shows which names a process tries to resolve (and resolves none of them).
 */
import dgram from "node:dgram";

export interface StubDnsServer {
  port: number;
  /** Query names in arrival order, lower-case, without the trailing dot. */
  queries: string[];
  close(): Promise<void>;
}

/** The question name of a DNS message (RFC 1035 4.1.2) and where the question ends, or undefined when malformed. */
function question(message: Buffer): { name: string; end: number } | undefined {
  const labels: string[] = [];
  let offset = 12;
  while (offset < message.length) {
    const length = message[offset]!;
    if (length === 0) return offset + 5 <= message.length ? { name: labels.join(".").toLowerCase(), end: offset + 5 } : undefined;
    if (length > 63 || offset + 1 + length > message.length) return undefined;
    labels.push(message.subarray(offset + 1, offset + 1 + length).toString("latin1"));
    offset += 1 + length;
  }
  return undefined;
}

export async function startStubDnsServer(host = "127.0.0.1", port = 0): Promise<StubDnsServer> {
  const socket = dgram.createSocket(host.includes(":") ? "udp6" : "udp4");
  const queries: string[] = [];
  socket.on("message", (message, from) => {
    if (message.length < 12) return;
    const asked = question(message);
    if (asked === undefined) return;
    queries.push(asked.name);
    // The same id and question, flagged as a response with RCODE 3 (NXDOMAIN) and no answers.
    const reply = Buffer.from(message);
    reply[2] = 0x80 | (message[2]! & 0x79);
    reply[3] = 0x80 | 0x03;
    reply.writeUInt16BE(0, 6);
    reply.writeUInt16BE(0, 8);
    reply.writeUInt16BE(0, 10);
    socket.send(reply.subarray(0, asked.end), from.port, from.address);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.bind(port, host, () => resolve());
  });
  return {
    port: socket.address().port,
    queries,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
