/**
 * The PostgreSQL engine's change-log cursors (api/store/postgres/feed-cursor.ts): a position per
 * partition, written and read back, foreign text refused, the partition of a tenant stable and
 * spread, and what every saved reader has passed.
 */
import { describe, expect, test } from "bun:test";
import type { FeedCursor } from "../../../api/model/record-values.ts";
import {
  decodeCursor,
  encodeCursor,
  partitionOf,
  passedByAll,
  savedCursor,
} from "../../../api/store/postgres/feed-cursor.ts";
import { FEED_PARTITIONS } from "../../../common/store/postgres/migrations.ts";

const at = (ticket: number, index = 0) => ({ ticket, index });
const positions = (set: Record<number, { ticket: number; index: number }>) =>
  Array.from({ length: FEED_PARTITIONS }, (_, p) => set[p] ?? at(0));

describe("feed cursors", () => {
  test("a cursor reads back as the positions it was made of; null is the log's start", () => {
    const made = positions({ 0: at(7, 2), 5: at(2 ** 53 - 1, 12), 15: at(1) });
    expect(decodeCursor(encodeCursor(made))).toEqual(made);
    expect(decodeCursor(null)).toEqual(positions({}));
    expect(savedCursor(positions({}))).toBeNull();
    expect(savedCursor(made)).toBe(encodeCursor(made));
  });

  const FOREIGN = [
    "sqlite:12",
    "pg:",
    "pg:1.0",
    `pg:${Array(FEED_PARTITIONS + 1)
      .fill("0.0")
      .join(",")}`,
    `pg:${Array(FEED_PARTITIONS).fill("01.0").join(",")}`,
    `pg:${Array(FEED_PARTITIONS).fill("-1.0").join(",")}`,
    `pg:${Array(FEED_PARTITIONS).fill("1.0").join(";")}`,
    "not a cursor",
  ];
  test.each(FOREIGN)("%p is refused", (text) => {
    expect(() => decodeCursor(text as FeedCursor)).toThrow("not a change-log cursor");
  });

  test("a tenant's partition is the same every time, and tenants spread over every partition", () => {
    const ids = Array.from({ length: 2000 }, (_, i) => `tenant-${i}`);
    expect(ids.map(partitionOf)).toEqual(ids.map(partitionOf));
    const counts = new Array(FEED_PARTITIONS).fill(0);
    for (const id of ids) counts[partitionOf(id)]++;
    expect(Math.min(...counts)).toBeGreaterThan(2000 / FEED_PARTITIONS / 2);
  });

  test("passed by all: per partition, the position the furthest-behind reader has reached", () => {
    const a = positions({ 0: at(5, 1), 1: at(9) });
    const b = positions({ 0: at(5, 3), 1: at(4, 7), 2: at(1) });
    expect(passedByAll([a, b])).toEqual(positions({ 0: at(5, 1), 1: at(4, 7) }));
    expect(passedByAll([])).toEqual(positions({}));
  });
});
