import { describe, expect, test } from "bun:test";
import { createRedactor, NO_SECRETS, secretForms } from "../../dispatcher/redact-secrets.ts";

const redactor = createRedactor(
  new Map([
    ["HOST_PART", "Tenant-ABC"],
    ["TOKEN", "p@ss word/ä"],
    ["KEY", 'k"ey\\1'],
    ["IDN", "Bücher"],
  ]),
);
const redact = (text: string) => redactor.redact(text);

describe("createRedactor", () => {
  test.each([
    ["as written", "token=p@ss word/ä", "token={{ TOKEN }}"],
    [
      "a host name (lower case)",
      "cannot resolve tenant-abc.example.com",
      "cannot resolve {{ HOST_PART }}.example.com",
    ],
    ["upper case", "TENANT-ABC", "{{ HOST_PART }}"],
    ["an IDNA host name", "https://xn--bcher-kva.example.com/", "https://{{ IDN }}.example.com/"],
    ["a URL path", "POST http://h/p@ss%20word/%C3%A4 failed", "POST http://h/{{ TOKEN }} failed"],
    ["a URL query", "http://h/?t=p@ss%20word/%C3%A4", "http://h/?t={{ TOKEN }}"],
    ["encodeURIComponent", "t=p%40ss%20word%2F%C3%A4", "t={{ TOKEN }}"],
    ["lower-case percent escapes", "t=p%40ss%20word%2f%c3%a4", "t={{ TOKEN }}"],
    ["a URL password", "http://u:p%40ss%20word%2F%C3%A4@h/", "http://u:{{ TOKEN }}@h/"],
    ["inside a JSON string", '{"key":"k\\"ey\\\\1"}', '{"key":"{{ KEY }}"}'],
    ["every occurrence", "Tenant-ABC, tenant-abc", "{{ HOST_PART }}, {{ HOST_PART }}"],
    ["nothing else", "HTTP 500: tenant-ab", "HTTP 500: tenant-ab"],
  ])("finds a value %s", (_, text, expected) => {
    expect(redact(text)).toBe(expected);
  });

  test("a value holding another is redacted whole", () => {
    const nested = createRedactor(
      new Map([
        ["SHORT", "abc"],
        ["LONG", "xabcx"],
      ]),
    );
    expect(nested.redact("xabcx abc")).toBe("{{ LONG }} {{ SHORT }}");
  });

  test("reach is the longest form's UTF-8 length", () => {
    expect(redactor.reach).toBe(Math.max(...secretForms("p@ss word/ä").map((f) => Buffer.byteLength(f))));
    expect(redactor.reach).toBeGreaterThanOrEqual(Buffer.byteLength("p%40ss%20word%2F%C3%A4"));
  });

  test("no secrets, or only empty ones, redact nothing", () => {
    expect(createRedactor(new Map())).toBe(NO_SECRETS);
    expect(createRedactor(new Map([["EMPTY", ""]]))).toBe(NO_SECRETS);
    expect(NO_SECRETS.redact("anything")).toBe("anything");
  });
});

describe("secretForms", () => {
  test("a form that stops early (a ? or # ends a path) is not taken for the value", () => {
    expect(secretForms("ab?cd")).toEqual(["ab?cd", "ab%3Fcd"]);
  });
  test("a value that cannot be a host has no host form", () => {
    expect(secretForms("a/b")).toEqual(["a/b", "a%2Fb"]);
  });
});
