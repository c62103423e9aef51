import { describe, it, expect } from "vitest";
import { AddressPolicy, classifyAddress, isPublicAddress } from "../../server/image-source/address-policy.js";

describe("classifyAddress", () => {
  const refused: [address: string, range: string][] = [
    ["127.0.0.1", "loopback"],
    ["127.1", "loopback"],
    ["2130706433", "loopback"],
    ["0x7f000001", "loopback"],
    ["0.0.0.0", "unspecified"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "linkLocal"],
    ["100.64.0.1", "carrierGradeNat"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["192.0.2.1", "reserved"],
    ["198.18.0.1", "reserved"],
    ["240.0.0.1", "reserved"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["[::1]", "loopback"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:10.0.0.1", "private"],
    ["::ffff:0:a00:1", "private"], // RFC 6145 IPv4-translated
    ["::7f00:1", "loopback"], // IPv4-compatible
    ["::10.0.0.1", "private"],
    ["64:ff9b::7f00:1", "loopback"], // NAT64
    ["64:ff9b::a9fe:a9fe", "linkLocal"],
    ["64:ff9b:1::1", "rfc6052"], // local-use NAT64 prefix
    ["2002:7f00:1::", "loopback"], // 6to4
    ["2002:c0a8:101::1", "private"],
    ["2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback"], // Teredo, client 127.0.0.1
    ["fc00::1", "uniqueLocal"],
    ["fd12:3456::1", "uniqueLocal"],
    ["fe80::1", "linkLocal"],
    ["fe80::1%eth0", "linkLocal"],
    ["ff02::1", "multicast"],
    ["2001:db8::1", "reserved"],
    ["::1:2:3:4", "unallocated"],
    ["not-an-ip", "invalid"],
    ["", "invalid"],
  ];

  it.each(refused)("refuses %s (%s)", (address, range) => {
    const verdict = classifyAddress(address);
    expect(verdict.isPublic).toBe(false);
    expect(verdict.range).toBe(range);
    expect(isPublicAddress(address)).toBe(false);
  });

  const allowed = [
    "8.8.8.8",
    "1.1.1.1",
    "93.184.216.34",
    "2606:4700:4700::1111",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
    "2002:808:808::1",
    "2001:0:4136:e378:8000:63bf:f7f7:f7f7", // Teredo, client 8.8.8.8 via public server
  ];

  it.each(allowed)("allows public %s", (address) => {
    const verdict = classifyAddress(address);
    expect(verdict).toMatchObject({ isPublic: true, range: "unicast" });
  });

  it("reports the IPv4 address an IPv6 address embeds", () => {
    expect(classifyAddress("64:ff9b::7f00:1").embeddedIPv4).toEqual(["127.0.0.1"]);
    expect(classifyAddress("2002:c0a8:101::1").embeddedIPv4).toEqual(["192.168.1.1"]);
    expect(classifyAddress("2001:0:4136:e378:8000:63bf:80ff:fffe").embeddedIPv4).toEqual([
      "127.0.0.1",
      "65.54.227.120",
    ]);
  });

  it("judges a Teredo address by its relay server too", () => {
    // Public client (8.8.8.8), private server 10.0.0.1.
    expect(classifyAddress("2001:0:a00:1:8000:63bf:f7f7:f7f7")).toMatchObject({ isPublic: false, range: "private" });
  });
});

describe("AddressPolicy", () => {
  it("allows only public addresses without an allow-list", () => {
    const policy = new AddressPolicy();
    expect(policy.allowsAddress("8.8.8.8")).toBe(true);
    expect(policy.allowsAddress("127.0.0.1")).toBe(false);
    expect(policy.allowsAddress("127.0.0.1", "localhost")).toBe(false);
    expect(policy.allowsHostname("localhost")).toBe(false);
  });

  it("allows a single allow-listed IP and nothing next to it", () => {
    const policy = new AddressPolicy(["127.0.0.1"]);
    expect(policy.allowsAddress("127.0.0.1")).toBe(true);
    expect(policy.allowsAddress("::ffff:127.0.0.1")).toBe(true); // the same host, mapped
    expect(policy.allowsAddress("127.0.0.2")).toBe(false);
    expect(policy.allowsAddress("::1")).toBe(false);
    expect(policy.allowsAddress("64:ff9b::7f00:1")).toBe(false); // a NAT64 gateway, not this host
  });

  it("allows addresses inside an allow-listed CIDR range", () => {
    const policy = new AddressPolicy(["10.0.0.0/8", "fd00::/8", "127.0.0.1/32"]);
    expect(policy.allowsAddress("10.20.30.40")).toBe(true);
    expect(policy.allowsAddress("fd12::1")).toBe(true);
    expect(policy.allowsAddress("127.0.0.1")).toBe(true);
    expect(policy.allowsAddress("11.0.0.1")).toBe(true); // public anyway
    expect(policy.allowsAddress("192.168.0.1")).toBe(false);
    expect(policy.allowsAddress("fc00::1")).toBe(false);
    expect(policy.allowsAddress("127.0.0.2")).toBe(false);
  });

  it("accepts bracketed IPv6 and IPv4-mapped ranges", () => {
    const policy = new AddressPolicy(["[::1]", "::ffff:192.168.0.0/112"]);
    expect(policy.allowsAddress("::1")).toBe(true);
    expect(policy.allowsAddress("192.168.3.4")).toBe(true);
    expect(policy.allowsAddress("192.169.0.1")).toBe(true); // public
    expect(policy.allowsAddress("10.0.0.1")).toBe(false);
  });

  it("lets an allow-listed hostname resolve to any address", () => {
    const policy = new AddressPolicy([" LocalHost ", "images.internal"]);
    expect(policy.allowsHostname("localhost")).toBe(true);
    expect(policy.allowsHostname("LOCALHOST")).toBe(true);
    expect(policy.allowsHostname("images.internal")).toBe(true);
    expect(policy.allowsHostname("evil.images.internal")).toBe(false);
    expect(policy.allowsAddress("127.0.0.1", "localhost")).toBe(true);
    expect(policy.allowsAddress("10.9.9.9", "images.internal")).toBe(true);
    // The name grants nothing to the address on its own, or to other names.
    expect(policy.allowsAddress("127.0.0.1")).toBe(false);
    expect(policy.allowsAddress("127.0.0.1", "other.example")).toBe(false);
  });

  it("refuses a non-IP string even for a listed range", () => {
    expect(new AddressPolicy(["0.0.0.0/0"]).allowsAddress("localhost")).toBe(false);
  });

  it.each(["127.1", "0x7f.0.0.1", "10.0/8", "2130706433", "10.0.0.0/33", "exa mple.com", "http://x", "a..b", ""])(
    "rejects the invalid allow-list entry %j at construction",
    (entry) => {
      expect(() => new AddressPolicy([entry])).toThrow(/Invalid allowed private host .*expected a host name/);
    },
  );
});
