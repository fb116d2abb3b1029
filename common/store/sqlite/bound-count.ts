/**
 * A row count (LIMIT, OFFSET) bound at run time. A bare `?` there makes SQLite
 * (3.47 on) plan with the bound value, so every new binding prepares the
 * statement again: ~3 µs a time, measured, more than a small page's reads.
 * An expression is read at run time and keeps the one plan.
 */
export const BOUND_COUNT = "(? + 0)";
