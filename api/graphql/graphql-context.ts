/** What every resolver of a request sees as its context. */
import type { Principal } from "../auth/principal.ts";

export interface GraphQLContext {
  principal: Principal;
}
