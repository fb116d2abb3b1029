/**
 * The values generated records and generated filters draw from: shared, so
 * filters hit stored values exactly, with the edges that break comparisons
 * (unicode beyond the BMP, quotes, LIKE wildcards, ASCII vs non-ASCII case,
 * integer and instant extremes).
 */
import { KIND_ITEMS, TAG_ITEMS } from "./test-catalogue.ts";

/** The instant the differential test calls now. */
export const NOW = Date.UTC(2024, 4, 1, 10, 0, 0, 123);
const HOUR = 3_600_000;

export const TEXTS = [
  "",
  "abc",
  "ABC",
  "aBc",
  "abd",
  "ab",
  "abcd",
  "é",
  "É",
  "日本",
  "😀",
  "a😀b",
  "\uE000",
  "\uFFFD",
  "it's",
  'say "hi"',
  "100%",
  "50% off",
  "a_b",
  "axb",
  "a\\b",
  "back\\",
  "%",
  "_",
  "Alpha",
  "alpha",
  "beta",
  " spaced ",
  "zzz",
  "Zeta",
  "ß",
  "ÿ",
  "line\nbreak",
  "Ga mma",
];
export const INTS = [0, 1, -1, 7, 42, 120, 2147483647, -2147483648, 9007199254740991, -9007199254740991];
export const MINUTES = [0, 1, 30, 60, 90, 120, 1440];
export const DECIMALS = [
  "0",
  "1",
  "-1",
  "0.1",
  "0.5",
  "-0.5",
  "1.5",
  "42",
  "123.456",
  "0.001",
  "-12345678.9",
  "99999999999999.99",
];
export const INSTANTS = [
  0,
  -1,
  1,
  NOW,
  NOW - 2 * HOUR,
  NOW + 24 * HOUR,
  NOW - 5 * 60_000,
  Date.UTC(2024, 4, 1),
  Date.UTC(2024, 4, 1, 10),
  Date.UTC(2024, 1, 29, 23, 59, 59, 999),
  253402300799999,
  -62135596800000,
];
export const DATES = [
  "0001-01-01",
  "1970-01-01",
  "2000-01-01",
  "2024-02-29",
  "2024-05-01",
  "2024-05-02",
  "9999-12-31",
];
export const TIMES = [
  "00:00:00.000",
  "09:05:00.000",
  "10:00:00.000",
  "10:00:00.123",
  "12:30:00.000",
  "23:59:59.999",
];
export const KINDS = KIND_ITEMS;
export const TAGS = TAG_ITEMS;
export const THING_UIDS = Array.from({ length: 40 }, (_, i) => `thing-${String(i).padStart(2, "0")}`);
export const OWNER_UIDS = Array.from({ length: 12 }, (_, i) => `owner-${String(i).padStart(2, "0")}`);
/** A reference to no record. */
export const DANGLING_UID = "owner-gone";
