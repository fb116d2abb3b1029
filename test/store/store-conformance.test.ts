/**
 * The store port's conformance suite: what every engine must do, run against
 * the engine `TEST_STORE` names (test/store/engines.ts; sqlite by default).
 * Each aggregate's tests live in conformance/; this file runs them in order.
 */
import { describe } from "bun:test";
import { describeCatalogue } from "./conformance/catalogue.ts";
import { describeChangeLog } from "./conformance/change-log.ts";
import { describeConstraints } from "./conformance/constraints.ts";
import { describeIdentity } from "./conformance/identity.ts";
import { describeListOrder } from "./conformance/list-order.ts";
import { describeSerializable } from "./conformance/serializable.ts";
import { useStoreUnderTest } from "./conformance/store-under-test.ts";
import { describeUnitOfWork } from "./conformance/unit-of-work.ts";
import { chosenEngine } from "./engines.ts";

const engine = chosenEngine();
const called = new Set<string>();

describe(`store conformance (${engine.name})`, () => {
  const sut = useStoreUnderTest(engine.name, engine.open, called);
  describeUnitOfWork(sut);
  describeSerializable(sut);
  describeIdentity(sut);
  describeCatalogue(sut);
  describeListOrder(sut);
  describeConstraints(sut);
  describeChangeLog(sut);
});
