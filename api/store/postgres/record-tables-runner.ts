/**
 * The runner of statements on a tenant's record tables. The engine names only the tables and
 * columns of the catalogue a request read; one gone by the time its statement runs (42P01 /
 * 42703) was deleted by a catalogue change that committed meanwhile (DDL commits apart from any
 * snapshot), which the port tells as CatalogueChangedError. Statements on the service's own tables
 * do not go through it: a missing one there is a defect, answered as one.
 */
import { CatalogueChangedError } from "../../../common/errors.ts";
import { isStorageGone } from "../../../common/store/postgres/pg-errors.ts";
import type { Runner } from "../../../common/store/postgres/runner.ts";

const told = <T>(running: Promise<T>): Promise<T> =>
  running.catch((error: unknown) => {
    throw isStorageGone(error) ? new CatalogueChangedError() : error;
  });

export function recordTablesRunner(db: Runner): Runner {
  return {
    rows: (text, params) => told(db.rows(text, params)),
    values: (text, params) => told(db.values(text, params)),
    unprepared: (text) => told(db.unprepared(text)),
    run: (text, params) => told(db.run(text, params)),
    command: (text) => told(db.command(text)),
  };
}
