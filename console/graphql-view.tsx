/**
 * GraphiQL on the tenant's schema: it introspects `/graphql/graphql` through the console's client,
 * so every request carries the token. The headers editor is off (the token is added for you, and a
 * token typed there would be kept with the tabs); tabs and operations are kept in sessionStorage,
 * gone with the tab like the token, and no longer written once the view is gone (signed out).
 */
import { GraphiQL } from "graphiql";
import { type ComponentProps, useEffect, useState } from "react";
import type { ApiClient } from "./api-client.ts";
import { createGraphiQLStorage } from "./graphiql-storage.ts";
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
  const [storage] = useState(createGraphiQLStorage);
  useEffect(() => () => storage.close(), [storage]);
  return (
    <div className="graphiql-host">
      <GraphiQL
        fetcher={fetcher}
        storage={storage}
        defaultQuery={FIRST_OPERATION}
        isHeadersEditorEnabled={false}
        forcedTheme="light"
      />
    </div>
  );
}
