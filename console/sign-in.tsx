/** The sign-in form: a token in, checked against `GET /auth/whoami`, kept in sessionStorage once good. */
import { type FormEvent, useState } from "react";
import { ApiError, createApiClient } from "./api-client.ts";
import type { Whoami } from "./api-types.ts";

export interface SignInProps {
  /** Why the last session ended (a token the service refused), shown above the form. */
  notice: string | null;
  onSignedIn: (token: string, whoami: Whoami) => void;
}

export function SignIn({ notice, onSignedIn }: SignInProps) {
  const [token, setToken] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const candidate = token.trim();
    if (candidate === "") return;
    setBusy(true);
    setError(null);
    try {
      const whoami = await createApiClient(candidate, () => undefined).get<Whoami>("/auth/whoami");
      onSignedIn(candidate, whoami);
    } catch (failure) {
      setError(failure instanceof ApiError ? failure.message : String(failure));
      setBusy(false);
    }
  }

  return (
    <main className="sign-in">
      <form className="card sign-in-card" onSubmit={submit} aria-label="Sign in">
        <h1>Console</h1>
        <p className="muted">Sign in with an API token of your tenant. It stays in this tab only.</p>
        {notice && <p className="banner banner-warn">{notice}</p>}
        <label htmlFor="token">Token</label>
        <input
          id="token"
          name="token"
          type="password"
          autoComplete="off"
          spellCheck={false}
          value={token}
          onChange={(event) => setToken(event.target.value)}
          placeholder="eyJhbGciOi…"
        />
        {error && (
          <p className="banner banner-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" className="primary" disabled={busy || token.trim() === ""}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}
