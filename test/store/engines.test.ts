/** TEST_STORE picks the engine the conformance suite runs on; a name no engine answers to fails loudly. */
import { expect, test } from "bun:test";
import { MONGODB_SKIPPED } from "../support/mongodb-test-run.ts";
import { chosenEngine } from "./engines.ts";

test("sqlite by default; an unknown engine is refused, naming the engines there are", () => {
  expect(chosenEngine(undefined).name).toBe(process.env.TEST_STORE || "sqlite");
  expect(chosenEngine("sqlite").name).toBe("sqlite");
  expect(() => chosenEngine("postgress")).toThrow(
    "TEST_STORE=postgress: no such store engine in test/store/engines.ts (sqlite, postgres, mongodb)",
  );
});

test("MongoDB is skipped, with its reason, unless MONGODB_TEST_URL names a server; the others always run", () => {
  const url = process.env.MONGODB_TEST_URL;
  try {
    delete process.env.MONGODB_TEST_URL;
    expect(chosenEngine("mongodb").skipped).toBe(MONGODB_SKIPPED);
    expect(chosenEngine("sqlite").skipped).toBeNull();
    process.env.MONGODB_TEST_URL = "mongodb://db.example:27017/?replicaSet=rs0";
    expect(chosenEngine("mongodb").skipped).toBeNull();
  } finally {
    if (url === undefined) delete process.env.MONGODB_TEST_URL;
    else process.env.MONGODB_TEST_URL = url;
  }
});
