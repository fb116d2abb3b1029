/**
 * Reads a deferred webhook's record at fire time through the GraphQL query
 * machinery, so the body is what a query of the record answers: the
 * webhook's read query run for the tenant with `UID == '<uid>'` and its
 * filter, as a principal of the service holding every role.
 */
import type { FiringWebhook } from "../feed/fire-webhook-event.ts";
import type { GraphQLService } from "../graphql/graphql-service.ts";
import { names } from "../model/naming.ts";
import { ROLES } from "../store/store.ts";
import type { DeferredWebhook } from "./deferred-webhook.ts";

/** An EQL string literal of `text`. */
const literal = (text: string) => `'${text.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;

/** The firing's view of a compiled deferred webhook of `tenantId`, reading with `graphql`. */
export function firingWebhookOf(
  tenantId: string,
  webhook: DeferredWebhook,
  graphql: GraphQLService,
): FiringWebhook {
  const principal = {
    tenantId,
    userId: "deferred-webhooks",
    username: "deferred-webhooks",
    roles: [...ROLES],
    tokenId: "deferred-webhooks",
    expiresAt: null,
  };
  const list = names.listField(webhook.object.name);
  return {
    object: webhook.object,
    rule: webhook.rule,
    rootKey: webhook.rootKey,
    async read(recordUid) {
      const own = `UID == ${literal(recordUid)}`;
      const filter = webhook.filter ? `${own} AND (${webhook.filter})` : own;
      const answer = await graphql.execute(principal, { query: webhook.readQuery, variables: { filter } });
      const body = (typeof answer.body === "string" ? JSON.parse(answer.body) : answer.body) as {
        data?: Record<string, { edges: { node: Record<string, unknown> }[] }> | null;
        errors?: { message: string }[];
      };
      if (body.errors?.length)
        throw new Error(`deferred read failed: ${body.errors.map((e) => e.message).join("; ")}`);
      return body.data?.[list]?.edges[0]?.node ?? null;
    },
  };
}
