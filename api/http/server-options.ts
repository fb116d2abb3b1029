/**
 * How the API listens: its configuration in, the Bun.serve options out.
 * main.ts listens with these and the transport tests do the same.
 *
 * Bun's own body cap (`maxRequestBodySize`) is lifted: over it, Bun answers a
 * bare 413 without our error shape, before any of our code runs. The error
 * plugin holds every body to MAX_BODY_BYTES instead: a declared length at
 * once, a chunked body as it streams in (error-plugin.ts).
 *
 * What Bun (1.4.5) still answers itself, with no hook to shape it: a header
 * block over 16 KiB (`bun --max-http-header-size`) or of more than 198 fields
 * gets a bare `431 Request Header Fields Too Large` and the connection closed;
 * `Expect: 100-continue` gets `100 Continue` before the handler runs, so an
 * over-limit declared length sees `100 Continue` and then our 413 (which
 * closes the connection, so the withheld body is never expected).
 */
import type { ApiConfig } from "../config.ts";

export function serverOptions(config: Pick<ApiConfig, "PORT" | "HOST">) {
  return {
    port: config.PORT,
    hostname: config.HOST,
    reusePort: false,
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
  };
}
