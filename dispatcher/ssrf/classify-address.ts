/**
 * Which kind of network an IP address belongs to, for the SSRF guard: an
 * address in, an AddressClass out. IPv6 forms that carry an IPv4 address
 * (mapped, translated, NAT64, 6to4, compatible) are judged by that address. Pure.
 */
import { embeddedIpv4, type IpAddress, type IpRange, ipRange, rangeContains } from "./ip-address.ts";

export type AddressClass =
  | "public"
  | "loopback"
  | "private"
  | "link-local"
  | "carrier-grade-nat"
  /** Cloud instance metadata services: never a delivery target. */
  | "metadata"
  | "unspecified"
  | "multicast"
  | "unique-local"
  /** Documentation, benchmarking, protocol-assignment, broadcast and future-use ranges. */
  | "reserved";

type Table = readonly (readonly [IpRange, AddressClass])[];
const table = (entries: [string, AddressClass][]): Table =>
  entries.map(([text, cls]) => [ipRange(text), cls]);

// First match wins: the exact metadata addresses come before the ranges holding them. Metadata
// addresses are never allowed, not even inside DELIVERY_ALLOW_PRIVATE_NETWORKS: they hand out the
// host's credentials. Names such as metadata.google.internal resolve to one of these.
const IPV4: Table = table([
  ["169.254.169.254/32", "metadata"], // AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle, Hetzner, ...
  ["169.254.170.2/32", "metadata"], // AWS ECS task metadata and credentials
  ["169.254.170.23/32", "metadata"], // AWS EKS Pod Identity Agent (credentials)
  ["169.254.0.23/32", "metadata"], // Tencent Cloud (metadata.tencentyun.com)
  ["169.254.42.42/32", "metadata"], // Scaleway
  ["100.100.100.200/32", "metadata"], // Alibaba Cloud
  ["168.63.129.16/32", "metadata"], // Azure WireServer (VM agent, extension settings): a public-looking address
  ["192.0.0.192/32", "metadata"], // Oracle Cloud (classic)
  ["0.0.0.0/8", "unspecified"],
  ["10.0.0.0/8", "private"],
  ["100.64.0.0/10", "carrier-grade-nat"],
  ["127.0.0.0/8", "loopback"],
  ["169.254.0.0/16", "link-local"],
  ["172.16.0.0/12", "private"],
  ["192.0.0.0/24", "reserved"],
  ["192.0.2.0/24", "reserved"],
  ["192.88.99.0/24", "reserved"],
  ["192.168.0.0/16", "private"],
  ["198.18.0.0/15", "reserved"],
  ["198.51.100.0/24", "reserved"],
  ["203.0.113.0/24", "reserved"],
  ["224.0.0.0/4", "multicast"],
  ["240.0.0.0/4", "reserved"], // includes 255.255.255.255
]);

const IPV6: Table = table([
  ["::/128", "unspecified"],
  ["::1/128", "loopback"],
  ["fd00:ec2::254/128", "metadata"], // AWS instance metadata over IPv6
  ["fd00:ec2::23/128", "metadata"], // AWS EKS Pod Identity Agent over IPv6
  ["fd20:ce::254/128", "metadata"], // GCP metadata over IPv6
  ["fd00:42::42/128", "metadata"], // Scaleway over IPv6
  ["fe80::a9fe:a9fe/128", "metadata"], // OpenStack metadata over IPv6 (169.254.169.254's link-local twin)
  ["fe80::/10", "link-local"],
  ["fec0::/10", "private"], // deprecated site-local
  ["fc00::/7", "unique-local"],
  ["ff00::/8", "multicast"],
  ["100::/64", "reserved"], // discard-only
  ["2001::/32", "reserved"], // Teredo: the IPv4 inside is obfuscated, so it cannot be judged
  ["2001:db8::/32", "reserved"],
  ["3fff::/20", "reserved"],
  ["64:ff9b:1::/48", "reserved"], // local-use IPv4/IPv6 translation
]);

const lookup = (entries: Table, address: IpAddress): AddressClass =>
  entries.find(([range]) => rangeContains(range, address))?.[1] ?? "public";

/** Classifies one address. */
export function classifyAddress(address: IpAddress): AddressClass {
  if (address.version === 4) return lookup(IPV4, address);
  const direct = lookup(IPV6, address);
  // :: and ::1 sit inside the IPv4-compatible range; their own meaning wins.
  if (direct === "unspecified" || direct === "loopback") return direct;
  const carried = embeddedIpv4(address);
  return carried ? lookup(IPV4, carried) : direct;
}
