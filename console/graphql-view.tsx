/**
 * GraphiQL on the tenant's schema: it introspects `/graphql/graphql` through the console's client,
 * so every request carries the token. The headers editor is off (the token is added for you, and a
 * token typed there would be kept with the tabs); tabs and operations are kept in sessionStorage,
 * gone with the tab like the token.
 */
import { GraphiQL } from "graphiql";
import type { ComponentProps } from "react";
import type { ApiClient } from "./api-client.ts";
import "graphiql/style.css";

type Fetcher = ComponentProps<typeof GraphiQL>["fetcher"];

const FIRST_OPERATION = `# The tenant's schema is in the docs (book icon).
# Run with Ctrl-Enter or the pink button.
{
  regions(first: 5) {
    totalCount
    edges { node { UID Name } }
  }
}
`;

export function GraphQLView({ api }: { api: ApiClient }) {
  const fetcher: Fetcher = (request) => api.graphql(request) as ReturnType<Fetcher>;
  return (
    <div className="graphiql-host">
      <GraphiQL
        fetcher={fetcher}
        storage={sessionStorage}
        defaultQuery={FIRST_OPERATION}
        isHeadersEditorEnabled={false}
        forcedTheme="light"
      />
    </div>
  );
}
