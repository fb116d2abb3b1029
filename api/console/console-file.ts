/**
 * One file of the console as the routes serve it: bytes in, a ConsoleFile out (its content type,
 * a strong ETag of its bytes, and a gzip copy when that is smaller), and the answer to one request
 * for it: 304 when the browser's copy is current, the gzip copy when the browser takes gzip.
 */

export interface ConsoleFile {
  body: Uint8Array<ArrayBuffer>;
  /** Null where gzip saves little (fonts and images come compressed already). */
  gzipped: Uint8Array<ArrayBuffer> | null;
  /** `text/javascript;charset=utf-8`, ... as Bun.build typed the output. */
  type: string;
  /** The identity body's ETag; the gzip copy's is the same with `-gz` inside the quotes. */
  etag: string;
}

/** Below this share of the original, a gzip copy is kept. */
const WORTH_GZIP = 0.9;

export function consoleFile(body: Uint8Array<ArrayBuffer>, type: string): ConsoleFile {
  const compressed = Bun.gzipSync(body, { level: 6 });
  return {
    body,
    gzipped: compressed.length < body.length * WORTH_GZIP ? compressed : null,
    type,
    etag: `"${Bun.hash(body).toString(36)}"`,
  };
}

/**
 * The answer to a GET of `file`: `headers` (caching, security) on every answer; 304 without a body
 * when If-None-Match names the ETag of the variant that would be sent.
 */
export function serveConsoleFile(
  file: ConsoleFile,
  request: Request,
  headers: Record<string, string>,
): Response {
  const gzip = file.gzipped !== null && acceptsGzip(request.headers.get("accept-encoding"));
  const etag = gzip ? `${file.etag.slice(0, -1)}-gz"` : file.etag;
  const common = { ...headers, etag, vary: "accept-encoding" };
  if (matchesEtag(request.headers.get("if-none-match"), etag))
    return new Response(null, { status: 304, headers: common });
  const body = gzip && file.gzipped ? file.gzipped : file.body;
  return new Response(body, {
    headers: { ...common, "content-type": file.type, ...(gzip ? { "content-encoding": "gzip" } : {}) },
  });
}

/** Whether an Accept-Encoding header takes gzip (`gzip`, `gzip;q=0.5`, `*`; not `gzip;q=0`). */
export function acceptsGzip(acceptEncoding: string | null): boolean {
  if (!acceptEncoding) return false;
  return acceptEncoding.split(",").some((part) => {
    const [coding = "", ...params] = part.split(";").map((piece) => piece.trim().toLowerCase());
    if (coding !== "gzip" && coding !== "*") return false;
    const q = params.find((param) => param.startsWith("q="));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/** If-None-Match against one ETag: `*`, or any listed tag, weak (`W/`) or not, equal to it. */
export function matchesEtag(ifNoneMatch: string | null, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch
    .split(",")
    .map((tag) => tag.trim().replace(/^W\//, ""))
    .some((tag) => tag === "*" || tag === etag);
}
