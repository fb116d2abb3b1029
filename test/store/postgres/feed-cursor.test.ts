/**
 * The PostgreSQL engine's change-log cursors (api/store/postgres/feed-cursor.ts): a position in one
 * partition, written and read back, foreign text and other partitions' cursors refused, the
 * partition of a tenant stable and spread, and what every saved reader has passed per partition.
 */
import { describe, expect, test } from "bun:test";
import type { FeedCursor } from "../../../api/model/record-values.ts";
import { DEFAULT_FEED_PARTITIONS, partitionOfTenant } from "../../../api/store/feed-partitions.ts";
import {
  decodeCursor,
  encodeCursor,
  passedByAll,
  type SavedPosition,
  savedCursor,
} from "../../../api/store/postgres/feed-cursor.ts";

const at = (ticket: number, index = 0) => ({ ticket, index });
const saved = (name: string, partition: number, ticket: number, index = 0): SavedPosition => ({
  name,
  partition,
  ticket,
  index,
});

describe("feed cursors", () => {
  test("a cursor reads back as the position it was made of, in its partition; null is the start", () => {
    for (const [partition, position] of [
      [0, at(7, 2)],
      [5, at(2 ** 53 - 1, 12)],
      [255, at(1)],
    ] as const) {
      expect(decodeCursor(partition, encodeCursor(partition, position))).toEqual(position);
      expect(savedCursor(partition, position)).toBe(encodeCursor(partition, position));
    }
    expect(decodeCursor(3, null)).toEqual(at(0));
    expect(savedCursor(3, at(0))).toBeNull();
  });

  const FOREIGN = [
    "sqlite:12",
    "pg:",
    "pg:1.0",
    "pg:0:01.0",
    "pg:0:-1.0",
    "pg:00:1.0",
    "pg:0:1;0",
    // The cursor form of the first migrations (every partition's position in one cursor).
    `pg:${Array(16).fill("1.0").join(",")}`,
    "not a cursor",
  ];
  test.each(FOREIGN)("%p is refused", (text) => {
    expect(() => decodeCursor(0, text as FeedCursor)).toThrow("not a change-log cursor");
  });

  test("another partition's cursor is refused", () => {
    expect(() => decodeCursor(1, encodeCursor(2, at(5)))).toThrow("not a change-log cursor of partition 1");
  });

  test("a tenant's partition is the same every time, and tenants spread over every partition", () => {
    const ids = Array.from({ length: 2000 }, (_, i) => `tenant-${i}`);
    for (const partitions of [DEFAULT_FEED_PARTITIONS, 3, 64]) {
      const of = (id: string) => partitionOfTenant(id, partitions);
      expect(ids.map(of)).toEqual(ids.map(of));
      const counts = new Array(partitions).fill(0);
      for (const id of ids) counts[of(id)]++;
      expect(Math.min(...counts)).toBeGreaterThan(2000 / partitions / 2);
    }
    expect(ids.map((id) => partitionOfTenant(id, 1))).toEqual(ids.map(() => 0));
  });

  test("passed by all: per partition, the furthest-behind reader's position; a reader without one there stands at the start", () => {
    const rows = [
      saved("a", 0, 5, 1),
      saved("a", 1, 9),
      saved("b", 0, 5, 3),
      saved("b", 1, 4, 7),
      saved("b", 2, 1),
    ];
    // Partition 2: reader a has no position there, so nothing is passed; 3: nobody has one.
    expect(passedByAll(4, rows)).toEqual([at(5, 1), at(4, 7), at(0), at(0)]);
    expect(passedByAll(2, [])).toEqual([at(0), at(0)]);
  });
});
