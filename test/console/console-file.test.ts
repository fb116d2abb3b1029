/** A console file's answer: conditional GET by ETag, gzip by Accept-Encoding (pure, no server). */
import { describe, expect, test } from "bun:test";
import { acceptsGzip, consoleFile, matchesEtag, serveConsoleFile } from "../../api/console/console-file.ts";

describe("acceptsGzip", () => {
  const cases: [string | null, boolean][] = [
    [null, false],
    ["", false],
    ["gzip", true],
    ["br, gzip, deflate", true],
    ["GZIP", true],
    ["gzip;q=0.5", true],
    ["gzip;q=0", false],
    ["gzip; q=0.0, identity", false],
    ["*", true],
    ["deflate, br", false],
    ["x-gzip", false],
  ];
  for (const [header, expected] of cases)
    test(`${JSON.stringify(header)} → ${expected}`, () => expect(acceptsGzip(header)).toBe(expected));
});

describe("matchesEtag", () => {
  const etag = '"abc"';
  const cases: [string | null, boolean][] = [
    [null, false],
    ['"abc"', true],
    ['W/"abc"', true],
    ['"x", "abc"', true],
    ["*", true],
    ['"abd"', false],
    ['"abc-gz"', false],
    ["abc", false],
  ];
  for (const [header, expected] of cases)
    test(`${JSON.stringify(header)} → ${expected}`, () => expect(matchesEtag(header, etag)).toBe(expected));
});

describe("serveConsoleFile", () => {
  const text = new TextEncoder().encode("console.log('hello');\n".repeat(200));
  const file = consoleFile(text, "text/javascript;charset=utf-8");
  const get = (headers: Record<string, string>) =>
    serveConsoleFile(file, new Request("http://x/console/assets/a.js", { headers }), {
      "cache-control": "c",
    });

  test("a compressible file keeps a gzip copy that unpacks to the same bytes, and a bytes-only ETag", () => {
    expect(file.gzipped).not.toBeNull();
    expect(Bun.gunzipSync(file.gzipped ?? new Uint8Array())).toEqual(text);
    expect(file.etag).toBe(consoleFile(text.slice(), "text/plain").etag);
  });

  test("an incompressible file keeps none", () => {
    const noise = crypto.getRandomValues(new Uint8Array(4096));
    expect(consoleFile(noise, "font/woff2").gzipped).toBeNull();
  });

  test("without gzip: the bytes, their type and ETag, the caller's headers", async () => {
    const answer = get({});
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe("text/javascript;charset=utf-8");
    expect(answer.headers.get("content-encoding")).toBeNull();
    expect(answer.headers.get("etag")).toBe(file.etag);
    expect(answer.headers.get("cache-control")).toBe("c");
    expect(answer.headers.get("vary")).toBe("accept-encoding");
    expect(new Uint8Array(await answer.arrayBuffer())).toEqual(text);
  });

  test("with gzip: the gzip copy under an ETag of its own", async () => {
    const answer = get({ "accept-encoding": "gzip, br" });
    expect(answer.headers.get("content-encoding")).toBe("gzip");
    expect(answer.headers.get("etag")).not.toBe(file.etag);
    expect(new Uint8Array(await answer.arrayBuffer())).toEqual(file.gzipped ?? new Uint8Array());
  });

  test("304 without a body when If-None-Match names the variant that would be sent", async () => {
    const plain = get({ "if-none-match": file.etag });
    expect(plain.status).toBe(304);
    expect(await plain.text()).toBe("");
    expect(plain.headers.get("etag")).toBe(file.etag);
    const zipped = get({ "accept-encoding": "gzip" }).headers.get("etag") ?? "";
    expect(get({ "accept-encoding": "gzip", "if-none-match": zipped }).status).toBe(304);
    // The identity copy's ETag does not validate the gzip copy, nor the other way round.
    expect(get({ "accept-encoding": "gzip", "if-none-match": file.etag }).status).toBe(200);
    expect(get({ "if-none-match": zipped }).status).toBe(200);
  });
});
