/**
 * ANALYZE of the tables this process fills, as they grow: each table once
 * this process has written `first` rows into it, then again each time that
 * count doubles. A read's plan is kept by its connection (read-template.ts),
 * and the planner's estimates for a table never analyzed are guesses: for
 * the bench's filtered list, a table loaded with 10,000 rows and not yet
 * analyzed got a full scan and a sort per read (431 reads/s; 3,840 with
 * this). Autovacuum analyzes such a table too, but only on its next
 * round (a minute by default); ANALYZE also makes the server drop the plans
 * kept for the table. At most one ANALYZE runs at a time, off every
 * request's path; one that fails is forgotten (autovacuum remains).
 */
import { setNewest } from "../../../common/bounded-map.ts";

/** Tables whose written rows are counted (the ones written last). */
const COUNTED_TABLES = 10_000;

export interface TableGrowth {
  /** `rows` were written into `table` (quoted, schema-qualified) by a unit of work. */
  grew(table: string, rows: number): void;
  /** Resolves once no ANALYZE is running or waiting. */
  settled(): Promise<void>;
}

/** `analyze` runs one table's ANALYZE (its text given); `first` rows written before the first. */
export function createTableGrowth(analyze: (text: string) => Promise<unknown>, first = 1000): TableGrowth {
  const written = new Map<string, { rows: number; next: number }>();
  const waiting = new Set<string>();
  let running: Promise<void> | null = null;

  const drain = async () => {
    for (const table of waiting) {
      waiting.delete(table);
      await analyze(`ANALYZE ${table}`).catch(() => undefined);
    }
    running = null;
  };

  return {
    grew(table, rows) {
      const count = written.get(table) ?? { rows: 0, next: first };
      count.rows += rows;
      setNewest(written, table, count, COUNTED_TABLES);
      if (count.rows < count.next) return;
      count.next = count.rows * 2;
      waiting.add(table);
      running ??= drain();
    },
    async settled() {
      while (running) await running;
    },
  };
}
