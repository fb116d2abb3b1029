/**
 * The console: the sign-in form until a token is good, then the tenant's GraphQL editor, webhooks
 * with their deliveries, and custom objects. A 401 from any call signs out.
 */
import { useCallback, useEffect, useMemo, useState } from "react";
import { type ApiClient, createApiClient } from "./api-client.ts";
import type { Whoami } from "./api-types.ts";
import { CustomObjectsView } from "./custom-objects-view.tsx";
import { GraphQLView } from "./graphql-view.tsx";
import { SignIn } from "./sign-in.tsx";
import { forgetSession, readToken, saveToken } from "./token-store.ts";
import { WebhooksView } from "./webhooks-view.tsx";

const VIEWS = [
  { id: "graphql", label: "GraphQL" },
  { id: "webhooks", label: "Webhooks" },
  { id: "custom", label: "Custom objects" },
] as const;
type ViewId = (typeof VIEWS)[number]["id"];

interface Session {
  token: string;
  whoami: Whoami | null;
}

export function App() {
  const [session, setSession] = useState<Session | null>(() => {
    const token = readToken();
    return token === null ? null : { token, whoami: null };
  });
  const [notice, setNotice] = useState<string | null>(null);

  const signOut = useCallback((why: string | null) => {
    setSession(null);
    setNotice(why);
  }, []);
  // Once signed out, and only after the views are gone (their last writes made, GraphiQL's storage
  // closed), this tab forgets the token and what GraphiQL kept.
  useEffect(() => {
    if (session === null) forgetSession();
  }, [session]);
  const token = session?.token ?? null;
  const api = useMemo(
    () =>
      token === null
        ? null
        : createApiClient(token, () =>
            signOut("The service refused the token (expired or revoked): sign in again."),
          ),
    [token, signOut],
  );

  // A tab reloaded with a kept token: learn who it is again (and find out whether it is still good).
  useEffect(() => {
    if (!api || session?.whoami) return;
    api.get<Whoami>("/auth/whoami").then(
      (whoami) => setSession((current) => (current ? { ...current, whoami } : current)),
      () => undefined, // a 401 already signed out; anything else leaves the header without a name
    );
  }, [api, session?.whoami]);

  if (!session || !api) {
    return (
      <SignIn
        notice={notice}
        onSignedIn={(signedIn, whoami) => {
          saveToken(signedIn);
          setNotice(null);
          setSession({ token: signedIn, whoami });
        }}
      />
    );
  }
  return <Shell api={api} whoami={session.whoami} onSignOut={() => signOut(null)} />;
}

function Shell({ api, whoami, onSignOut }: { api: ApiClient; whoami: Whoami | null; onSignOut: () => void }) {
  const [view, setView] = useState<ViewId>("graphql");
  return (
    <div className="shell">
      <header className="topbar">
        <span className="brand">Console</span>
        <nav aria-label="Views">
          {VIEWS.map(({ id, label }) => (
            <button
              key={id}
              type="button"
              className={`tab${view === id ? " active" : ""}`}
              aria-current={view === id ? "page" : undefined}
              onClick={() => setView(id)}
            >
              {label}
            </button>
          ))}
        </nav>
        <span className="who muted">
          {whoami ? `${whoami.username} · ${whoami.roles.join(", ")} · tenant ${whoami.tenantId}` : ""}
        </span>
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      {/* GraphiQL stays mounted while hidden: its editors, schema and answers survive a look at the webhooks. */}
      <main className="view view-graphql" hidden={view !== "graphql"}>
        <GraphQLView api={api} />
      </main>
      {view === "webhooks" && (
        <main className="view view-page">
          <WebhooksView api={api} />
        </main>
      )}
      {view === "custom" && (
        <main className="view view-page">
          <CustomObjectsView api={api} />
        </main>
      )}
    </div>
  );
}
