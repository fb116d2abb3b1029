/**
 * The operator's rules for where deliveries may go: an address or URL in,
 * allowed or refused (with the reason) out. Public addresses are allowed;
 * every other class only inside the operator's allowlist; metadata addresses
 * never. Pure.
 */
import { type AddressClass, classifyAddress } from "./classify-address.ts";
import { embeddedIpv4, type IpRange, parseIp, parseIpRange, rangeContains } from "./ip-address.ts";

export interface DestinationPolicy {
  /** Whether plain `http://` URLs may be delivered to (development and tests). */
  allowHttp: boolean;
  /** Non-public ranges deliveries may reach anyway (e.g. 127.0.0.0/8 for tests). */
  allowedRanges: readonly IpRange[];
}

export type Verdict = { allowed: true } | { allowed: false; reason: string };

const ALLOWED: Verdict = { allowed: true };

/**
 * Parses a comma-separated allowlist of CIDR ranges or single addresses
 * (`127.0.0.0/8,::1`). Empty text is an empty list.
 * @throws Error naming every invalid entry.
 */
export function parseAllowedRanges(text: string): IpRange[] {
  const entries = text
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  const bad = entries.filter((entry) => parseIpRange(entry) === null);
  if (bad.length > 0) throw new Error(`not an IP address or CIDR range: ${bad.join(", ")}`);
  return entries.map((entry) => parseIpRange(entry) as IpRange);
}

/** Whether a delivery may connect to `address` (an IP address text). */
export function checkAddress(address: string, policy: DestinationPolicy): Verdict {
  const ip = parseIp(address);
  if (!ip) return { allowed: false, reason: `${address} is not an IP address` };
  const cls: AddressClass = classifyAddress(ip);
  if (cls === "public") return ALLOWED;
  if (cls === "metadata") return { allowed: false, reason: `${address} is a cloud metadata address` };
  const carried = embeddedIpv4(ip);
  const listed = policy.allowedRanges.some(
    (range) => rangeContains(range, ip) || (carried !== null && rangeContains(range, carried)),
  );
  return listed ? ALLOWED : { allowed: false, reason: `${address} is a ${cls} address` };
}

/** Whether a delivery may use `url`'s scheme: https always, http only when the operator allows it. */
export function checkScheme(url: URL, policy: DestinationPolicy): Verdict {
  if (url.protocol === "https:") return ALLOWED;
  if (url.protocol === "http:" && policy.allowHttp) return ALLOWED;
  return {
    allowed: false,
    reason:
      url.protocol === "http:"
        ? "plain http:// is not allowed (DELIVERY_ALLOW_HTTP is off)"
        : `scheme ${url.protocol} is not allowed`,
  };
}
