import { describe, expect, test } from "bun:test";
import { type AddressClass, classifyAddress } from "../../dispatcher/ssrf/classify-address.ts";
import {
  checkAddress,
  checkScheme,
  type DestinationPolicy,
  parseAllowedRanges,
} from "../../dispatcher/ssrf/destination-policy.ts";
import { embeddedIpv4, parseIp, parseIpRange, rangeContains } from "../../dispatcher/ssrf/ip-address.ts";
import { type DestinationError, resolveDestination } from "../../dispatcher/ssrf/resolve-destination.ts";

const ip = (text: string) => {
  const parsed = parseIp(text);
  if (!parsed) throw new Error(`test address ${text} does not parse`);
  return parsed;
};

describe("parseIp", () => {
  test.each([
    ["1.2.3.4", "01020304"],
    ["255.255.255.255", "ffffffff"],
    ["::", "0".repeat(32)],
    ["::1", `${"0".repeat(31)}1`],
    ["[::1]", `${"0".repeat(31)}1`],
    ["2001:db8::8:800:200c:417a", "20010db80000000000080800200c417a"],
    ["::ffff:127.0.0.1", "00000000000000000000ffff7f000001"],
    ["::ffff:7f00:1", "00000000000000000000ffff7f000001"],
    ["fe80::1%eth0", "fe800000000000000000000000000001"],
    ["1:2:3:4:5:6:7:8", "00010002000300040005000600070008"],
    ["1:2:3:4:5:6:1.2.3.4", "00010002000300040005000601020304"],
  ])("%s", (text, hex) => {
    expect(Buffer.from(ip(text).bytes).toString("hex")).toBe(hex);
  });

  test.each([
    "1.2.3",
    "1.2.3.4.5",
    "256.1.1.1",
    "01.2.3.4",
    "1.2.3.-1",
    "example.com",
    "",
    "1:2:3:4:5:6:7:8:9",
    "1::2::3",
    "12345::",
    "1:2:3:4:5:6:7:8::",
    "::1.2.3.4:5",
    "fe80::1%",
    "g::1",
  ])("%p is not an address", (text) => {
    expect(parseIp(text)).toBeNull();
  });
});

describe("ranges", () => {
  test.each([
    ["10.0.0.0/8", "10.255.1.2", true],
    ["10.0.0.0/8", "11.0.0.0", false],
    ["172.16.0.0/12", "172.31.255.255", true],
    ["172.16.0.0/12", "172.32.0.0", false],
    ["100.64.0.0/10", "100.127.0.1", true],
    ["100.64.0.0/10", "100.128.0.1", false],
    ["fc00::/7", "fdff::1", true],
    ["fe80::/10", "febf::1", true],
    ["fe80::/10", "fec0::1", false],
    ["127.0.0.1", "127.0.0.1", true],
    ["127.0.0.1", "127.0.0.2", false],
    ["0.0.0.0/0", "8.8.8.8", true],
    ["10.0.0.0/8", "::ffff:10.0.0.1", false],
  ] as [string, string, boolean][])("%s contains %s: %p", (range, address, expected) => {
    const parsed = parseIpRange(range);
    if (!parsed) throw new Error(range);
    expect(rangeContains(parsed, ip(address))).toBe(expected);
  });

  test.each(["10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/8/8", "nope/8", "10.0.0.0/x"])(
    "%p is not a range",
    (text) => expect(parseIpRange(text)).toBeNull(),
  );
});

describe("classifyAddress", () => {
  const CASES: [string, AddressClass][] = [
    ["8.8.8.8", "public"],
    ["93.184.216.34", "public"],
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["172.32.0.1", "public"],
    ["192.168.1.1", "private"],
    ["169.254.1.1", "link-local"],
    ["169.254.169.254", "metadata"],
    ["169.254.170.2", "metadata"],
    ["100.100.100.200", "metadata"],
    // Every metadata address named in classify-address.ts, however it is written.
    ["169.254.170.23", "metadata"],
    ["169.254.0.23", "metadata"],
    ["169.254.42.42", "metadata"],
    ["168.63.129.16", "metadata"],
    ["192.0.0.192", "metadata"],
    ["::ffff:168.63.129.16", "metadata"],
    ["64:ff9b::a83f:8110", "metadata"],
    ["2002:a83f:8110::1", "metadata"],
    ["::ffff:192.0.0.192", "metadata"],
    ["168.63.129.17", "public"],
    ["192.0.0.193", "reserved"],
    ["100.64.0.1", "carrier-grade-nat"],
    ["100.127.255.255", "carrier-grade-nat"],
    ["100.128.0.1", "public"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["255.255.255.255", "reserved"],
    ["240.0.0.1", "reserved"],
    ["192.0.2.1", "reserved"],
    ["198.18.0.1", "reserved"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["fe80::1", "link-local"],
    ["febf:ffff::1", "link-local"],
    ["fc00::1", "unique-local"],
    ["fd12:3456::1", "unique-local"],
    ["fd00:ec2::254", "metadata"],
    ["fd00:ec2::23", "metadata"],
    ["fd20:ce::254", "metadata"],
    ["fd00:42::42", "metadata"],
    ["fe80::a9fe:a9fe", "metadata"],
    ["fe80::a9fe:a9fe%eth0", "metadata"],
    ["fd00:ec2::253", "unique-local"],
    ["ff02::1", "multicast"],
    ["fec0::1", "private"],
    ["2001:db8::1", "reserved"],
    ["2001::1", "reserved"],
    ["2606:4700:4700::1111", "public"],
    // IPv6 forms carrying an IPv4 address are judged by it.
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:10.0.0.1", "private"],
    ["::ffff:192.168.0.1", "private"],
    ["::ffff:169.254.169.254", "metadata"],
    ["::ffff:a9fe:a9fe", "metadata"],
    ["::ffff:100.64.0.1", "carrier-grade-nat"],
    ["::ffff:0.0.0.0", "unspecified"],
    ["::ffff:224.0.0.1", "multicast"],
    ["::ffff:8.8.8.8", "public"],
    ["::ffff:0:10.0.0.1", "private"],
    ["64:ff9b::127.0.0.1", "loopback"],
    ["64:ff9b::8.8.8.8", "public"],
    ["2002:7f00:1::", "loopback"],
    ["2002:a9fe:a9fe::1", "metadata"],
    ["::127.0.0.1", "loopback"],
    ["::10.0.0.1", "private"],
  ];
  test.each(CASES)("%s is %s", (address, expected) => {
    expect(classifyAddress(ip(address))).toBe(expected);
  });

  test("embeddedIpv4 finds the mapped address", () => {
    expect(embeddedIpv4(ip("::ffff:1.2.3.4"))?.bytes).toEqual(Uint8Array.from([1, 2, 3, 4]));
    expect(embeddedIpv4(ip("2606:4700::1"))).toBeNull();
    expect(embeddedIpv4(ip("1.2.3.4"))).toBeNull();
  });
});

describe("destination policy", () => {
  const closed: DestinationPolicy = { allowHttp: false, allowedRanges: [] };
  const loopback: DestinationPolicy = {
    allowHttp: true,
    allowedRanges: parseAllowedRanges("127.0.0.0/8, ::1"),
  };
  const policies: Record<string, DestinationPolicy> = {
    closed,
    loopback,
    "link-local": { allowHttp: true, allowedRanges: parseAllowedRanges("169.254.0.0/16") },
    "unique-local": { allowHttp: true, allowedRanges: parseAllowedRanges("fc00::/7") },
    everything: { allowHttp: true, allowedRanges: parseAllowedRanges("0.0.0.0/0, ::/0") },
  };

  test.each([
    ["8.8.8.8", "closed", true],
    ["127.0.0.1", "closed", false],
    ["::1", "closed", false],
    ["::ffff:127.0.0.1", "closed", false],
    ["10.0.0.1", "closed", false],
    ["127.0.0.1", "loopback", true],
    ["127.9.9.9", "loopback", true],
    ["::1", "loopback", true],
    ["::ffff:127.0.0.1", "loopback", true],
    ["10.0.0.1", "loopback", false],
    ["169.254.1.1", "link-local", true],
    ["169.254.169.254", "link-local", false],
    ["fd00:ec2::254", "unique-local", false],
    // Metadata addresses stay refused inside an allowlist that holds them (even one allowing everything).
    ["168.63.129.16", "everything", false],
    ["192.0.0.192", "everything", false],
    ["100.100.100.200", "everything", false],
    ["169.254.170.23", "everything", false],
    ["fd20:ce::254", "everything", false],
    ["fe80::a9fe:a9fe", "everything", false],
    ["::ffff:168.63.129.16", "everything", false],
    ["10.0.0.1", "everything", true],
    ["not-an-ip", "loopback", false],
  ] as [string, string, boolean][])("%s under the %s policy allowed: %p", (address, policy, allowed) => {
    expect(checkAddress(address, policies[policy] as DestinationPolicy).allowed).toBe(allowed);
  });

  test("refusals say why", () => {
    expect(checkAddress("10.0.0.1", closed)).toEqual({
      allowed: false,
      reason: "10.0.0.1 is a private address",
    });
    expect(checkAddress("169.254.169.254", loopback)).toEqual({
      allowed: false,
      reason: "169.254.169.254 is a cloud metadata address",
    });
  });

  test.each([
    ["https://example.com/", "closed", true],
    ["http://example.com/", "closed", false],
    ["http://example.com/", "loopback", true],
    ["ftp://example.com/", "loopback", false],
    ["file:///etc/passwd", "loopback", false],
  ] as [string, string, boolean][])("%s under the %s policy allowed: %p", (url, policy, allowed) => {
    expect(checkScheme(new URL(url), policies[policy] as DestinationPolicy).allowed).toBe(allowed);
  });

  test("an allowlist with bad entries names them all", () => {
    expect(() => parseAllowedRanges("127.0.0.0/8,bogus,10.0.0.0/99")).toThrow(
      "not an IP address or CIDR range: bogus, 10.0.0.0/99",
    );
    expect(parseAllowedRanges("")).toEqual([]);
  });
});

describe("resolveDestination", () => {
  const closed: DestinationPolicy = { allowHttp: false, allowedRanges: [] };
  const names: Record<string, string[]> = {
    "public.test": ["93.184.216.34"],
    "rebind.test": ["93.184.216.34", "127.0.0.1"],
    "mapped.test": ["::ffff:169.254.169.254"],
  };
  const lookupHost = async (host: string) => {
    const found = names[host];
    if (!found) throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
    return found;
  };
  const refusal = (url: string, policy = closed) =>
    resolveDestination(new URL(url), policy, lookupHost).then(
      () => null,
      (error: DestinationError) => [error.kind, error.message],
    );

  test("a public name resolves to its checked addresses", async () => {
    expect(await resolveDestination(new URL("https://public.test/x"), closed, lookupHost)).toEqual([
      "93.184.216.34",
    ]);
  });

  test.each([
    ["https://127.0.0.1/", ["refused", "destination refused: 127.0.0.1 is a loopback address"]],
    ["https://[::1]:8443/", ["refused", "destination refused: ::1 is a loopback address"]],
    ["https://[::ffff:7f00:1]/", ["refused", "destination refused: ::ffff:7f00:1 is a loopback address"]],
    ["https://0x7f.1/", ["refused", "destination refused: 127.0.0.1 is a loopback address"]],
    ["https://2130706433/", ["refused", "destination refused: 127.0.0.1 is a loopback address"]],
    [
      "https://rebind.test/",
      ["refused", "destination refused: rebind.test resolves to 127.0.0.1 is a loopback address"],
    ],
    [
      "https://mapped.test/",
      [
        "refused",
        "destination refused: mapped.test resolves to ::ffff:169.254.169.254 is a cloud metadata address",
      ],
    ],
    ["http://public.test/", ["refused", "plain http:// is not allowed (DELIVERY_ALLOW_HTTP is off)"]],
    ["https://nowhere.test/", ["dns", "cannot resolve nowhere.test (ENOTFOUND)"]],
  ] as [string, [string, string]][])("%s", async (url, expected) => {
    expect(await refusal(url)).toEqual(expected);
  });
});
