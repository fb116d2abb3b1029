/**
 * The console's one way to the API (same origin): every call carries the signed-in token as a
 * bearer token. REST answers are unwrapped from `{ result }`; an error answer becomes an ApiError
 * with the service's `errorType` and message. A 401 means the token is no longer good (expired,
 * revoked): the console signs out.
 */

/** An error answer of the API, or a failure to reach it (`errorType` "network"). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly errorType: string,
    message: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export interface ApiClient {
  /** `GET path` → its `result`. @throws ApiError */
  get<T>(path: string): Promise<T>;
  /** `POST path` with a JSON body → its `result`. @throws ApiError */
  post<T>(path: string, body?: unknown): Promise<T>;
  /** A GraphQL request to `/graphql/graphql`: the answer's JSON whatever its status (errors included). */
  graphql(request: unknown): Promise<unknown>;
}

export function createApiClient(token: string, onUnauthorized: () => void): ApiClient {
  async function send(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; json: unknown }> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    let response: Response;
    try {
      response = await fetch(path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch {
      throw new ApiError(0, "network", "the service could not be reached");
    }
    if (response.status === 401) onUnauthorized();
    const text = await response.text();
    try {
      return { status: response.status, json: text === "" ? null : JSON.parse(text) };
    } catch {
      throw new ApiError(
        response.status,
        "unexpected",
        `the service answered ${response.status} without JSON`,
      );
    }
  }

  async function rest<T>(method: string, path: string, body?: unknown): Promise<T> {
    const { status, json } = await send(method, path, body);
    const answer = (json ?? {}) as { result?: T; errorType?: string; message?: string };
    if (status >= 400) {
      throw new ApiError(status, answer.errorType ?? "unexpected", answer.message ?? `HTTP ${status}`);
    }
    return answer.result as T;
  }

  return {
    get: (path) => rest("GET", path),
    post: (path, body) => rest("POST", path, body ?? {}),
    graphql: async (request) => (await send("POST", "/graphql/graphql", request)).json,
  };
}
