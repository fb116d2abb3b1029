/**
 * A plain HTTP client for the API process over loopback, as any outside
 * client would call it: bearer token, JSON bodies, a deadline on every call.
 * Network failures (a killed API) throw; HTTP errors come back as answers.
 */

export interface ApiAnswer {
  status: number;
  headers: Headers;
  /** Parsed JSON, or the text when the body is not JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: callers read arbitrary JSON answers
  body: any;
  text: string;
  ms: number;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as is; wins over `body`. */
  rawBody?: string | Uint8Array;
  headers?: Record<string, string>;
  /** Overrides the client's token; `null` sends no Authorization header. */
  token?: string | null;
  timeoutMs?: number;
}

export type ApiClient = ReturnType<typeof apiClient>;

export function apiClient(base: string, token: string, defaultTimeoutMs = 10_000) {
  async function request(method: string, path: string, options: RequestOptions = {}): Promise<ApiAnswer> {
    const headers: Record<string, string> = {};
    const bearer = options.token === undefined ? token : options.token;
    if (bearer !== null) headers.authorization = `Bearer ${bearer}`;
    let body: string | Uint8Array | undefined = options.rawBody;
    if (body === undefined && options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined) headers["content-type"] = "application/json";
    Object.assign(headers, options.headers);
    const started = performance.now();
    const response = await fetch(`${base}${path}`, {
      method,
      headers,
      body,
      signal: AbortSignal.timeout(options.timeoutMs ?? defaultTimeoutMs),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return {
      status: response.status,
      headers: response.headers,
      body: parsed,
      text,
      ms: performance.now() - started,
    };
  }

  /** POSTs a GraphQL document; throws unless HTTP 200. */
  async function graphql(query: string, variables?: Record<string, unknown>, options: RequestOptions = {}) {
    const answer = await request("POST", "/graphql/graphql", { ...options, body: { query, variables } });
    if (answer.status !== 200) throw new Error(`GraphQL answered HTTP ${answer.status}: ${answer.text}`);
    return answer.body as {
      data: Record<string, unknown> | null;
      errors?: { message: string; path?: string[]; extensions?: Record<string, unknown> }[];
    };
  }

  return { base, token, request, graphql };
}

/**
 * Waits (bounded) until `GET /health` answers: 200 when `healthy`, any HTTP
 * answer otherwise (the API is up even while Redis is away).
 */
export async function waitForApi(base: string, { healthy = true, timeoutMs = 20_000 } = {}): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`${base}/health`, { signal: AbortSignal.timeout(1000) });
      last = `${response.status} ${await response.text()}`;
      if (response.status === 200 || !healthy) return;
    } catch (error) {
      last = String(error);
    }
    await Bun.sleep(50);
  }
  throw new Error(`the API did not answer as expected within ${timeoutMs} ms (last: ${last})`);
}
