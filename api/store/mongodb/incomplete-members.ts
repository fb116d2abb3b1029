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
  // catalogue (the version counter is implemented: counter-session.ts)
  "loadCustomDefinitions",
  "ensureObjectStorage",
  "createCustomObject",
  "addCustomField",
  "deleteCustomObject",
  "deleteCustomField",
  "setObjectTracked",
  // records (sequences and the reads are implemented: counter-session.ts, record-read-session.ts)
  "insertRecord",
  "updateRecord",
  "deleteRecord",
  // delivery log, and its retention step
  "listDeliveries",
  "findDelivery",
  "listAttempts",
  "insertDeliveries",
  "resetDelivery",
  "pruneDeliveries",
  // copying a store (api/admin/copy-store.ts)
  "exportCatalogue",
  "importCatalogue",
  "importRecords",
  "importSequences",
  "passedByAllReaders",
  "importChanges",
  "exportDeliveries",
  "importDeliveries",
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
