/**
 * Statements over Bun's SQL client, on the pool (reads outside a unit of
 * work, each its own snapshot) or on a transaction. Every value is bound;
 * statements are prepared by the client and kept per connection by their text.
 * A failed statement's error goes through `translateError` (a statement past
 * the engine's statement_timeout becomes a LimitExceededError), and the runner of
 * a transaction notes a failure that makes the transaction worth running again
 * (the unit of work retries it, whatever `work` did with the error).
 */
import type { SQL } from "bun";
import { isRetryable, translateError } from "./pg-errors.ts";

/** A value Bun's client binds (arrays as PostgreSQL arrays). */
export type BoundValue = string | number | boolean | null | readonly (string | null)[];

export interface Runner {
  /** The rows as objects keyed by column name. */
  rows<T>(text: string, params?: readonly BoundValue[]): Promise<T[]>;
  /** The rows as arrays, columns in select-list order. */
  values(text: string, params?: readonly BoundValue[]): Promise<unknown[][]>;
  /** The rows as arrays of a statement with nothing bound, run unprepared (the server keeps nothing of it). */
  unprepared(text: string): Promise<unknown[][]>;
  /** Runs a statement; resolves to the rows it wrote (or read). */
  run(text: string, params?: readonly BoundValue[]): Promise<number>;
  /** Runs a statement; resolves to the server's command tag (`COMMIT`, or `ROLLBACK` for a COMMIT refused). */
  command(text: string): Promise<string>;
}

/** What a unit of work learns from its runner. */
export interface FailureWatch {
  /** Set once a statement failed with a serialization failure, a deadlock or a catalogue race. */
  retryable: boolean;
}

/**
 * A runner over `client`; `watch` hears of retryable failures; `statementTimeoutMs` is the
 * statement time limit the engine set on its connections (0: none), named by the error a canceled
 * statement becomes.
 */
export function createRunner(
  client: Pick<SQL, "unsafe">,
  watch?: FailureWatch,
  statementTimeoutMs = 0,
): Runner {
  const fail = (error: unknown): never => {
    if (watch && isRetryable(error)) watch.retryable = true;
    throw translateError(error, statementTimeoutMs);
  };
  const query = (text: string, params: readonly BoundValue[] = []) =>
    client.unsafe(text, params as BoundValue[]);
  return {
    rows: async <T>(text: string, params?: readonly BoundValue[]) => {
      try {
        return (await query(text, params)) as T[];
      } catch (error) {
        return fail(error);
      }
    },
    values: async (text, params) => {
      try {
        return (await query(text, params).values()) as unknown[][];
      } catch (error) {
        return fail(error);
      }
    },
    unprepared: async (text) => {
      try {
        return (await client.unsafe(text).simple().values()) as unknown[][];
      } catch (error) {
        return fail(error);
      }
    },
    run: async (text, params) => {
      try {
        return (await query(text, params)).count;
      } catch (error) {
        return fail(error);
      }
    },
    command: async (text) => {
      try {
        return String((await query(text)).command);
      } catch (error) {
        return fail(error);
      }
    },
  };
}
