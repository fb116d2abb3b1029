/**
 * The SSRF guard's I/O shell: a delivery URL in, the checked IP addresses to
 * connect to out. The caller connects to one of these addresses (never to
 * the name again), so a DNS answer that changes after the check cannot
 * redirect the delivery (no rebinding window).
 */
import { lookup } from "node:dns/promises";
import { checkAddress, checkScheme, type DestinationPolicy } from "./destination-policy.ts";
import { parseIp } from "./ip-address.ts";

/** Resolves a host name to IP address texts, like getaddrinfo. A port, so tests can name hosts. */
export type LookupHost = (hostname: string) => Promise<string[]>;

/** The system resolver (getaddrinfo: /etc/hosts, then DNS). */
export const systemLookup: LookupHost = async (hostname) =>
  (await lookup(hostname, { all: true })).map((entry) => entry.address);

/** Why a destination cannot be used: refused by policy, or its name did not resolve. */
export class DestinationError extends Error {
  constructor(
    readonly kind: "refused" | "dns",
    message: string,
  ) {
    super(message);
    this.name = "DestinationError";
  }
}

/**
 * Checks the scheme, resolves the host (an IP literal stands for itself) and
 * checks every address it resolves to. A name with any refused address is
 * refused as a whole: mixing public and private answers is how rebinding
 * attacks start.
 * @throws DestinationError (`refused` or `dns`).
 */
export async function resolveDestination(
  url: URL,
  policy: DestinationPolicy,
  lookupHost: LookupHost,
): Promise<string[]> {
  const scheme = checkScheme(url, policy);
  if (!scheme.allowed) throw new DestinationError("refused", scheme.reason);
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const literal = parseIp(host) !== null;
  let addresses: string[];
  if (literal) {
    addresses = [host];
  } else {
    try {
      addresses = await lookupHost(host);
    } catch (error) {
      const code = (error as { code?: string }).code;
      throw new DestinationError("dns", `cannot resolve ${host}${code ? ` (${code})` : ""}`);
    }
    if (addresses.length === 0) throw new DestinationError("dns", `cannot resolve ${host}: no addresses`);
  }
  for (const address of addresses) {
    const verdict = checkAddress(address, policy);
    if (!verdict.allowed) {
      const where = literal ? verdict.reason : `${host} resolves to ${verdict.reason}`;
      throw new DestinationError("refused", `destination refused: ${where}`);
    }
  }
  return addresses;
}
