/**
 * The store port's conformance suite: what every engine must do, run against
 * the engine `TEST_STORE` names (test/store/engines.ts; sqlite by default).
 * Each aggregate's tests live in conformance/; this file runs them in order,
 * then fails if any member of the port was never called by them. An engine
 * this run has no server for (MongoDB without MONGODB_TEST_URL) runs nothing
 * and says so: one console line and one skipped test, both with the reason.
 */
import { describe, expect, test } from "bun:test";
import { describeCatalogue } from "./conformance/catalogue.ts";
import { describeChangeLog } from "./conformance/change-log.ts";
import { describeConstraints } from "./conformance/constraints.ts";
import { describeCopy } from "./conformance/copy.ts";
import { describeDeliveryLog } from "./conformance/delivery-log.ts";
import { describeIdentity } from "./conformance/identity.ts";
import { describeListOrder } from "./conformance/list-order.ts";
import { ALL_PORT_MEMBERS, OPTIONAL_PORT_MEMBERS, PORT_MEMBERS } from "./conformance/port-members.ts";
import { describeQueries } from "./conformance/queries.ts";
import { describeReadJson } from "./conformance/read-json.ts";
import { describeRecords } from "./conformance/records.ts";
import { describeRetention } from "./conformance/retention.ts";
import { describeSerializable } from "./conformance/serializable.ts";
import { useStoreUnderTest } from "./conformance/store-under-test.ts";
import { describeUnitOfWork } from "./conformance/unit-of-work.ts";
import { describeWebhooksAndConfig } from "./conformance/webhooks.ts";
import { chosenEngine } from "./engines.ts";

const engine = chosenEngine();
/** The port members the suite has called, on any store or unit of work it opened. */
const called = new Set<string>();

if (engine.skipped !== null) {
  console.log(`store conformance (${engine.name}): ${engine.skipped}`);
  test.skip(`store conformance (${engine.name}): ${engine.skipped}`, () => {});
} else
  describe(`store conformance (${engine.name})`, () => {
    const sut = useStoreUnderTest(engine.name, engine.open, called);
    describeUnitOfWork(sut);
    describeSerializable(sut);
    describeIdentity(sut);
    describeCatalogue(sut);
    describeRecords(sut);
    describeQueries(sut);
    describeListOrder(sut);
    describeReadJson(sut);
    describeConstraints(sut);
    describeChangeLog(sut);
    describeWebhooksAndConfig(sut);
    describeDeliveryLog(sut);
    describeRetention(sut);
    describeCopy(sut);

    // Last: registered after every other test of the suite, so it runs after them.
    test("every member of every aggregate of the port was exercised", () => {
      const members = Object.keys(ALL_PORT_MEMBERS);
      const store = sut.store as unknown as Record<string, unknown>;
      const leftOut = OPTIONAL_PORT_MEMBERS.filter((member) => typeof store[member] !== "function");
      const missing = Object.entries(PORT_MEMBERS).flatMap(([aggregate, list]) =>
        Object.keys(list)
          .filter((member) => !called.has(member) && !leftOut.includes(member as never))
          .map((member) => `${aggregate}.${member}`),
      );
      expect(missing).toEqual([]);
      const note = leftOut.length > 0 ? ` (left out, optional: ${leftOut.join(", ")})` : "";
      console.log(
        `store conformance (${engine.name}): ${members.length - leftOut.length} of ${members.length} port members covered${note}`,
      );
    });
  });
