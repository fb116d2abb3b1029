/**
 * IP address text in, bytes out: strict IPv4 dotted quads, IPv6 in every
 * textual form (`::` compression, embedded dotted quad, zone id), CIDR
 * ranges and containment. Pure.
 */

export interface IpAddress {
  version: 4 | 6;
  /** 4 bytes for IPv4, 16 for IPv6. */
  bytes: Uint8Array;
}

export interface IpRange {
  version: 4 | 6;
  bytes: Uint8Array;
  /** Leading bits that must match. */
  prefix: number;
}

const OCTET = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

function parseIpv4(text: string): Uint8Array | null {
  const parts = text.split(".");
  if (parts.length !== 4 || !parts.every((part) => OCTET.test(part))) return null;
  return Uint8Array.from(parts.map(Number));
}

/** Hex groups (16-bit) of one side of `::`; a dotted quad is allowed as the last group when `allowQuad`. */
function parseGroups(text: string, allowQuad: boolean): number[] | null {
  if (text === "") return [];
  const groups: number[] = [];
  const parts = text.split(":");
  for (const [index, part] of parts.entries()) {
    if (allowQuad && index === parts.length - 1 && part.includes(".")) {
      const quad = parseIpv4(part);
      if (!quad) return null;
      groups.push(
        ((quad[0] as number) << 8) | (quad[1] as number),
        ((quad[2] as number) << 8) | (quad[3] as number),
      );
    } else if (/^[0-9a-fA-F]{1,4}$/.test(part)) {
      groups.push(Number.parseInt(part, 16));
    } else {
      return null;
    }
  }
  return groups;
}

function parseIpv6(text: string): Uint8Array | null {
  const [address = "", zone] = text.split("%");
  if (zone === "") return null;
  const halves = address.split("::");
  if (halves.length > 2) return null;
  const compressed = halves.length === 2;
  const head = parseGroups(halves[0] as string, !compressed);
  const tail = compressed ? parseGroups(halves[1] as string, true) : [];
  if (!head || !tail) return null;
  const missing = 8 - head.length - tail.length;
  if (compressed ? missing < 1 : missing !== 0) return null;
  const groups = [...head, ...new Array<number>(missing).fill(0), ...tail];
  const bytes = new Uint8Array(16);
  groups.forEach((group, i) => {
    bytes[2 * i] = group >> 8;
    bytes[2 * i + 1] = group & 0xff;
  });
  return bytes;
}

/** Parses an IP address (IPv6 with or without brackets, optionally with a zone id); null when `text` is not one. */
export function parseIp(text: string): IpAddress | null {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  const v4 = parseIpv4(bare);
  if (v4) return { version: 4, bytes: v4 };
  const v6 = bare.includes(":") ? parseIpv6(bare) : null;
  return v6 ? { version: 6, bytes: v6 } : null;
}

/** Parses `address/prefix` or a bare address (a single-address range); null when invalid. */
export function parseIpRange(text: string): IpRange | null {
  const [address = "", prefixText, extra] = text.trim().split("/");
  if (extra !== undefined) return null;
  const ip = parseIp(address);
  if (!ip) return null;
  const bits = ip.bytes.length * 8;
  if (prefixText === undefined) return { ...ip, prefix: bits };
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > bits) return null;
  return { ...ip, prefix: Number(prefixText) };
}

/** True when `address` lies in `range` (same IP version only). */
export function rangeContains(range: IpRange, address: IpAddress): boolean {
  if (range.version !== address.version) return false;
  let bits = range.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if (((range.bytes[i] as number) & mask) !== ((address.bytes[i] as number) & mask)) return false;
  }
  return true;
}

/** A range from trusted literal text (built-in tables). @throws Error when invalid: a programming error. */
export function ipRange(text: string): IpRange {
  const parsed = parseIpRange(text);
  if (!parsed) throw new Error(`invalid built-in IP range ${text}`);
  return parsed;
}

/** IPv6 forms that carry an IPv4 address, and where its 4 bytes sit. */
const IPV4_CARRIERS: readonly { range: IpRange; offset: number }[] = [
  { range: ipRange("::ffff:0:0/96"), offset: 12 }, // IPv4-mapped
  { range: ipRange("::ffff:0:0:0/96"), offset: 12 }, // IPv4-translated (SIIT)
  { range: ipRange("64:ff9b::/96"), offset: 12 }, // NAT64 well-known prefix
  { range: ipRange("2002::/16"), offset: 2 }, // 6to4
  { range: ipRange("::/96"), offset: 12 }, // IPv4-compatible (deprecated)
];

/** The IPv4 address an IPv6 address carries (mapped, translated, NAT64, 6to4, compatible); null otherwise. */
export function embeddedIpv4(address: IpAddress): IpAddress | null {
  if (address.version !== 6) return null;
  const carrier = IPV4_CARRIERS.find((c) => rangeContains(c.range, address));
  if (!carrier) return null;
  return { version: 4, bytes: address.bytes.slice(carrier.offset, carrier.offset + 4) };
}
