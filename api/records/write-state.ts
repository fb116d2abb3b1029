/** What the operations of one write share: the unit of work, the catalogue, the context, the idAliases, the changes so far. */
import type { Catalogue } from "../model/catalogue.ts";
import type { ChangeEntry } from "../model/record-values.ts";
import type { StoreWriter } from "../store/store.ts";
import type { WriteContext } from "./record-operation.ts";

/** The record an `idAlias` names: its UID and the object it belongs to. */
export interface AliasedRecord {
  uid: string;
  objectName: string;
}

/** State shared by the operations of one write. */
export interface WriteState {
  tx: StoreWriter;
  catalogue: Catalogue;
  context: WriteContext;
  /** idAlias → the record it names, so a use of it for another object is refused. */
  aliases: Map<string, AliasedRecord>;
  changes: ChangeEntry[];
}
