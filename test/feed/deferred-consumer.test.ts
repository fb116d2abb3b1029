/** What one change does to a deferred webhook's firings (firingChanges): a table. */
import { describe, expect, test } from "bun:test";
import { firingChanges, type SchedulingWebhook } from "../../api/feed/deferred-consumer.ts";
import type { ObjectDef } from "../../api/model/catalogue.ts";
import type { FeedCursor, LoggedChange, RecordValues } from "../../api/model/record-values.ts";

const T = Date.UTC(2030, 0, 1);
const webhook: SchedulingWebhook = {
  webhookId: "w",
  object: { name: "Jobs" } as ObjectDef,
  rule: { field: "Start", offset: 1000 },
};
const change = (
  operation: LoggedChange["operation"],
  before: RecordValues | null,
  after: RecordValues | null,
): LoggedChange => ({
  tenantId: "t",
  objectName: "Jobs",
  operation,
  uid: "u",
  before,
  after,
  mutationId: "m",
  sequence: 0,
  committedAt: T,
  cursor: "1" as FeedCursor,
});
const firing = (dueAt: number) => ({ tenantId: "t", webhookId: "w", recordUid: "u", dueAt });

describe("firingChanges", () => {
  test.each<[string, LoggedChange, number[], number[]]>([
    ["an insert with an instant is scheduled", change("INSERT", null, { Start: T }), [T + 1000], []],
    ["an insert without one is not", change("INSERT", null, { Start: null }), [], []],
    [
      "an update that keeps the due time changes nothing",
      change("UPDATE", { Start: T, Name: "a" }, { Start: T, Name: "b" }),
      [],
      [],
    ],
    [
      "an update that moves it cancels the old and schedules the new",
      change("UPDATE", { Start: T }, { Start: T + 5 }),
      [T + 1005],
      [T + 1000],
    ],
    ["an update that clears it cancels", change("UPDATE", { Start: T }, { Start: null }), [], [T + 1000]],
    ["an update that sets it schedules", change("UPDATE", { Start: null }, { Start: T }), [T + 1000], []],
    ["a delete cancels", change("DELETE", { Start: T }, null), [], [T + 1000]],
  ])("%s", (_, c, schedule, cancel) => {
    expect(firingChanges(c, webhook)).toEqual({ schedule: schedule.map(firing), cancel: cancel.map(firing) });
  });
});
