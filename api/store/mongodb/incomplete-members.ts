/**
 * The port's members the experimental MongoDB engine does not implement yet,
 * each answering with an EngineIncompleteError naming itself, so a process
 * started on the engine (STORE_EXPERIMENTAL=mongodb) fails a request that
 * needs one with a typed error, never with an undefined function. The list is
 * the exact record of what is missing (README, "Store engines").
 */
import { EngineIncompleteError } from "../../../common/errors.ts";
import type { StoreWriter } from "../store.ts";

/** Every member not implemented, by aggregate. */
export const INCOMPLETE_MEMBERS = [
  // records (sequences are implemented: counter-session.ts); they wait for the EQL → MQL compiler and the codec
  "findRecords",
  "findRecordByValue",
  "countReferencing",
  "listRecords",
  "countRecords",
  "listRelated",
  // copying a store (api/admin/copy-store.ts)
  "exportSequences",
] as const satisfies readonly (keyof StoreWriter)[];

export type IncompleteMember = (typeof INCOMPLETE_MEMBERS)[number];

/** A rejecting stand-in for each member not implemented. */
export function incompleteMembers(): Pick<StoreWriter, IncompleteMember> {
  const members = INCOMPLETE_MEMBERS.map((member) => [
    member,
    async () => {
      throw new EngineIncompleteError("MongoDB", member);
    },
  ]);
  // Each rejects whatever it is called with, so it stands in for any member's signature.
  return Object.fromEntries(members) as Pick<StoreWriter, IncompleteMember>;
}
