/** TEST_STORE picks the engine the conformance suite runs on; a name no engine answers to fails loudly. */
import { expect, test } from "bun:test";
import { chosenEngine } from "./engines.ts";

test("sqlite by default; an unknown engine is refused, naming the engines there are", () => {
  expect(chosenEngine(undefined).name).toBe(process.env.TEST_STORE || "sqlite");
  expect(chosenEngine("sqlite").name).toBe("sqlite");
  expect(() => chosenEngine("postgress")).toThrow(
    "TEST_STORE=postgress: no such store engine in test/store/engines.ts (sqlite, postgres)",
  );
});
