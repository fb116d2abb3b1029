/**
 * The signed-in token lives in this tab's sessionStorage and nowhere else: it is gone when the tab
 * closes, is not shared with other tabs, and is never written to localStorage or a cookie.
 */

const TOKEN_KEY = "console.token";

/** The token this tab signed in with, or null. */
export function readToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function saveToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
}

/**
 * Forgets the token and everything else this tab kept: GraphiQL keeps its tabs and operations in
 * sessionStorage too (graphql-view.tsx), and they may hold the tenant's data.
 */
export function forgetSession(): void {
  sessionStorage.clear();
}
