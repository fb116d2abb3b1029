/**
 * Scenario 6, hostile input: a bounded, seeded fuzz run against the real API
 * process over every endpoint and every GraphQL argument — random and mutated
 * bodies, filters, documents, path segments and headers, huge and deeply
 * nested inputs. Every answer must come within the deadline, below 500, and
 * without internals (stack traces, SQL errors); afterwards the same process
 * must still answer normally.
 */

import { startService } from "../service-processes.ts";
import { forgeJwt } from "../tokens.ts";
import { type ApiAnswer, apiClient } from "./api-client.ts";
import { percentile } from "./delivery-check.ts";
import {
  deepJson,
  deepSelection,
  graphqlValue,
  mutateText,
  mutateValue,
  nastyString,
  pick,
  type Random,
  randomFilter,
  randomJson,
} from "./fuzz-inputs.ts";
import { FAST_DISPATCHER_ENV } from "./scenario.ts";
import { seededRandom } from "./writer.ts";

interface FuzzRequest {
  label: string;
  method: string;
  path: string;
  body?: string;
  headers: Record<string, string>;
}

interface SchemaInfo {
  /** Object name → its scalar field names. */
  objects: Map<string, string[]>;
  /** Object name → its lookup (object) and reverse-list field names. */
  lookups: Map<string, string[]>;
  lists: Map<string, string[]>;
  /** Object name → input field names of `New<Object>`. */
  inputs: Map<string, string[]>;
}

const LEAKS = /SQLITE_|SQLiteError|node_modules|\.ts:\d+:\d+|\n\s+at /;
const DEADLINE_MS = 10_000;

const THING = {
  name: "FuzzThing",
  fields: [
    { name: "Code", column: { type: "string", unique: true } },
    { name: "Notes", column: { type: "textarea" } },
    { name: "Link", column: { type: "url" } },
    { name: "Count", column: { type: "int" } },
    { name: "Amount", column: { type: "decimal", precision: 10, scale: 2 } },
    { name: "Flag", column: { type: "boolean" } },
    { name: "Day", column: { type: "date" } },
    { name: "At", column: { type: "datetime" } },
    { name: "Clock", column: { type: "time" } },
    { name: "Kind", column: { type: "picklist", items: ["A", "B"] } },
    { name: "Tags", column: { type: "multipicklist", items: ["X", "Y", "Z"] } },
    { name: "Region", column: { type: "reference", referenceSchemaName: "Regions" } },
  ],
};

export async function fuzz(scale: { requests: number; seed?: number; concurrency?: number }) {
  const seed = scale.seed ?? 42;
  const random = seededRandom(seed);
  const service = await startService({ dispatcherEnv: FAST_DISPATCHER_ENV });
  try {
    const client = apiClient(service.base, service.token, DEADLINE_MS);
    const fixtures = await prepare(client);
    const info = await schemaInfo(client);
    const apiPid = service.api.pid();
    const statuses = new Map<number, number>();
    const times: number[] = [];
    const failures: string[] = [];
    const fail = (text: string) => {
      if (failures.length < 20) failures.push(text);
    };
    let next = 0;
    let sent = 0;
    const worker = async () => {
      while (next < scale.requests) {
        const index = next++;
        const request = generate(random, fixtures, info);
        sent++;
        let answer: ApiAnswer;
        try {
          answer = await client.request(request.method, request.path, {
            rawBody: request.body,
            headers: request.headers,
            token: null,
            timeoutMs: DEADLINE_MS,
          });
        } catch (error) {
          fail(
            `#${index} ${request.label} ${request.method} ${request.path.slice(0, 120)}: no answer (${error})`,
          );
          if (!service.api.running()) throw new Error(`the API died on request #${index} (${request.label})`);
          continue;
        }
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        times.push(answer.ms);
        if (answer.status >= 500)
          fail(
            `#${index} ${request.label} ${request.method} ${request.path.slice(0, 120)} → ${answer.status} ${answer.text.slice(0, 300)}`,
          );
        if (LEAKS.test(answer.text))
          fail(`#${index} ${request.label}: internals in the answer: ${answer.text.slice(0, 300)}`);
      }
    };
    const started = Date.now();
    await Promise.all(Array.from({ length: scale.concurrency ?? 8 }, worker));
    const elapsed = Date.now() - started;

    // Afterwards: the same process, answering normally.
    if (service.api.pid() !== apiPid || !service.api.running())
      fail("the API process is not the one the run started with");
    if (!service.dispatcher.running()) fail("the dispatcher is gone");
    const health = await client.request("GET", "/health");
    if (health.status !== 200) fail(`/health answered ${health.status} afterwards`);
    const written = await client.graphql(
      `mutation { schema { r: insertRegions(input: {Name: "after-fuzz", Timezone: "UTC"}) } }`,
    );
    const uid = (written.data?.schema as { r?: string } | undefined)?.r;
    const read = uid ? await client.graphql(`{ regionsById(UID: "${uid}") { Name } }`) : null;
    if ((read?.data?.regionsById as { Name?: string } | undefined)?.Name !== "after-fuzz")
      fail(`a normal write and read failed afterwards: ${JSON.stringify(written)} ${JSON.stringify(read)}`);
    const internal = (service.api.output().match(/"internal|errorId/g) ?? []).length;
    const byClass = (low: number) =>
      [...statuses].filter(([status]) => status >= low && status < low + 100).reduce((n, [, c]) => n + c, 0);
    return {
      name: "hostile input",
      setup: `${scale.requests} seeded (seed ${seed}) random requests, ${scale.concurrency ?? 8} at a time, over every REST endpoint and every GraphQL argument (list, by-id, lookup and reverse-list fields; insert, update, upsert, delete) of a tenant with a custom object of every column type: random and mutated JSON bodies, EQL filters (mutated, 50,000-deep parentheses, 40,000-value lists), documents (mutated, deep, aliased, cyclic fragments), path segments, query strings and headers (no or forged tokens, odd content types, 64 KiB headers); each answer due within ${DEADLINE_MS / 1000} s`,
      extra: {
        "requests sent": sent,
        "answers 2xx / 3xx / 4xx / 5xx": `${byClass(200)} / ${byClass(300)} / ${byClass(400)} / ${byClass(500)}`,
        "answer time p50 / p99 / max": `${percentile(times, 50).toFixed(1)} / ${percentile(times, 99).toFixed(1)} / ${Math.max(0, ...times).toFixed(0)} ms`,
        "requests/s": Math.round((sent / elapsed) * 1000),
        "internal errors in the API log": internal,
        "API process afterwards":
          service.api.pid() === apiPid ? "same process, healthy" : "restarted or gone",
      },
      failures,
    };
  } finally {
    await service.stop();
  }
}

interface Fixtures {
  adminToken: string;
  schedulerToken: string;
  ids: string[];
  names: string[];
  cursor: string;
}

async function prepare(client: ReturnType<typeof apiClient>): Promise<Fixtures> {
  const object = await client.request("POST", "/custom/standalone/schemas", { body: THING });
  if (object.status !== 200) throw new Error(`FuzzThing: ${object.status} ${object.text}`);
  const written = await client.graphql(`mutation { schema {
    r: insertRegions(input: {Name: "North", Timezone: "UTC"}, idAlias: "r")
    j: insertJobs(input: {Duration: 30, RegionId: "r"})
    t: insertFuzzThing(input: {Code: "c1", Count: 3, Amount: "1.50", Flag: true, Day: "2024-05-01", At: "2024-05-01T10:00:00Z", Clock: "10:00:00", Kind: "A", Tags: ["X"], RegionId: "r"})
  } }`);
  if (written.errors) throw new Error(`fixtures: ${JSON.stringify(written.errors)}`);
  const records = Object.values(written.data?.schema as Record<string, string>);
  const hook = await client.request("POST", "/webhooks", {
    body: {
      name: "fuzz-hook",
      url: "http://127.0.0.1:9/hook",
      type: "graphql",
      query: "subscription { schemaJobs { operation data { UID } } }",
    },
  });
  await client.request("POST", "/configuration/extension", {
    body: { key: "PLAIN", value: "v", configType: "plain-text" },
  });
  const token = await client.request("POST", "/auth/token", { body: { roles: ["scheduler"] } });
  const page = await client.graphql("{ regions(first: 1) { edges { cursor } } }");
  const cursor = (page.data?.regions as { edges: { cursor: string }[] } | undefined)?.edges[0]?.cursor ?? "";
  return {
    adminToken: client.token,
    schedulerToken: token.body.result.token,
    ids: [...records, hook.body.result.id, object.body.result.schema.id, token.body.result.jti],
    names: ["PLAIN", "FuzzThing", "fuzz-hook", "Regions", "Code"],
    cursor,
  };
}

async function schemaInfo(client: ReturnType<typeof apiClient>): Promise<SchemaInfo> {
  const answer = await client.graphql(
    "{ __schema { types { name kind fields { name type { kind ofType { kind } } } inputFields { name } } } }",
  );
  const types = (
    (answer.data?.__schema ?? { types: [] }) as {
      types: {
        name: string;
        kind: string;
        fields: { name: string; type: { kind: string; ofType: { kind: string } | null } }[] | null;
        inputFields: { name: string }[] | null;
      }[];
    }
  ).types;
  const objects = new Map<string, string[]>();
  const lookups = new Map<string, string[]>();
  const lists = new Map<string, string[]>();
  const inputs = new Map<string, string[]>();
  const kindOf = (f: { type: { kind: string; ofType: { kind: string } | null } }) =>
    f.type.kind === "NON_NULL" ? f.type.ofType?.kind : f.type.kind;
  const connection = new Set(
    types.filter((t) => t.name.endsWith("Connection")).map((t) => t.name.slice(0, -10)),
  );
  for (const type of types) {
    if (type.kind === "OBJECT" && connection.has(type.name)) {
      const fields = type.fields ?? [];
      const named = (kind: string) => fields.filter((f) => kindOf(f) === kind).map((f) => f.name);
      objects.set(
        type.name,
        fields.filter((f) => kindOf(f) !== "OBJECT" && kindOf(f) !== "LIST").map((f) => f.name),
      );
      lookups.set(type.name, named("OBJECT"));
      lists.set(type.name, named("LIST"));
    }
    if (type.kind === "INPUT_OBJECT" && type.name.startsWith("New"))
      inputs.set(
        type.name.slice(3),
        (type.inputFields ?? []).map((f) => f.name),
      );
  }
  return { objects, lookups, lists, inputs };
}

const lowerFirst = (name: string) => name.charAt(0).toLowerCase() + name.slice(1);
/** A header value from any text: fetch refuses control and non-Latin-1 characters before sending. */
const headerValue = (text: string) => text.replace(/[^\x20-\x7e]/g, "?");
/** A path segment from any text (lone surrogates made well-formed first: URLs cannot carry them). */
const segment = (text: string) => encodeURIComponent(text.toWellFormed());

function generate(random: Random, fixtures: Fixtures, info: SchemaInfo): FuzzRequest {
  const roll = random();
  const request = roll < 0.55 ? graphqlRequest(random, fixtures, info) : restRequest(random, fixtures, info);
  return withHeaders(random, fixtures, request);
}

function withHeaders(random: Random, fixtures: Fixtures, request: FuzzRequest): FuzzRequest {
  const headers: Record<string, string> = { ...request.headers };
  const roll = random();
  if (roll < 0.75) headers.authorization = `Bearer ${fixtures.adminToken}`;
  else if (roll < 0.8) headers.authorization = `Bearer ${fixtures.schedulerToken}`;
  else if (roll < 0.85)
    headers.authorization = `Bearer ${forgeJwt({ alg: pick(random, ["none", "HS512", "RS256"]), typ: "JWT" }, { sub: "x", tid: "y", roles: ["administrator"] }, random() < 0.5 ? null : "guess")}`;
  else if (roll < 0.9)
    headers.authorization = pick(random, [
      "Bearer",
      "Bearer ",
      "Basic eDp5",
      `Bearer ${nastyString(random).slice(0, 5000)}`,
    ]);
  if (request.body !== undefined && !headers["content-type"])
    headers["content-type"] =
      random() < 0.9
        ? "application/json"
        : pick(random, [
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "application/json; charset=utf-16",
            "",
          ]);
  if (random() < 0.03) headers["x-junk"] = "j".repeat(pick(random, [8192, 65_536]));
  if (random() < 0.03) headers.accept = nastyString(random).slice(0, 200);
  return {
    ...request,
    headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, headerValue(v)])),
  };
}

function graphqlBody(random: Random, query: string, variables?: unknown): string {
  const roll = random();
  if (roll < 0.03) return JSON.stringify([{ query }]);
  if (roll < 0.06)
    return JSON.stringify({ query, variables: randomJson(random, 3), operationName: randomJson(random, 1) });
  return JSON.stringify(variables === undefined ? { query } : { query, variables });
}

function graphqlRequest(random: Random, fixtures: Fixtures, info: SchemaInfo): FuzzRequest {
  const objects = [...info.objects.keys()];
  const object = pick(random, objects);
  const fields = info.objects.get(object) ?? ["UID"];
  const value = () => (random() < 0.3 ? JSON.stringify(pick(random, fixtures.ids)) : graphqlValue(random));
  const roll = random();
  let query: string;
  let variables: unknown;
  let label: string;
  if (roll < 0.35) {
    label = "query";
    const args: string[] = [];
    if (random() < 0.7) args.push(`filter: ${JSON.stringify(randomFilter(random, fields, objects))}`);
    if (random() < 0.3)
      args.push(
        `orderBy: ${JSON.stringify(random() < 0.7 ? `${pick(random, fields)} ${pick(random, ["ASC", "DESC", "asc", "sideways", ""])}` : nastyString(random))}`,
      );
    if (random() < 0.3) args.push(`first: ${graphqlValue(random)}`);
    if (random() < 0.2)
      args.push(
        `after: ${JSON.stringify(random() < 0.5 ? mutateText(random, fixtures.cursor) : nastyString(random))}`,
      );
    if (random() < 0.2) args.push(`offset: ${graphqlValue(random)}`);
    const picked = new Set(Array.from({ length: 3 }, () => pick(random, fields)));
    const lookupFields = info.lookups.get(object) ?? [];
    if (lookupFields.length > 0 && random() < 0.3) picked.add(`${pick(random, lookupFields)} { UID }`);
    const listFields = info.lists.get(object) ?? [];
    if (listFields.length > 0 && random() < 0.4) {
      // A reverse list with its own filter, orderBy and limit over the related object's fields.
      const related = [...info.objects.values()].flat();
      const listArgs = [
        random() < 0.7 ? `filter: ${JSON.stringify(randomFilter(random, related, objects))}` : "",
        random() < 0.4 ? `orderBy: ${JSON.stringify(`${pick(random, related)} DESC`)}` : "",
        random() < 0.5 ? `limit: ${graphqlValue(random)}` : "",
      ].filter((a) => a !== "");
      picked.add(`${pick(random, listFields)}${listArgs.length ? `(${listArgs.join(", ")})` : ""} { UID }`);
    }
    const selection = [...picked].join(" ");
    query = `{ ${lowerFirst(object)}${args.length ? `(${args.join(", ")})` : ""} { ${random() < 0.3 ? "totalCount " : ""}edges { cursor offset node { ${selection} } } pageInfo { hasNextPage endCursor } } }`;
  } else if (roll < 0.45) {
    label = "query with variables";
    query = `query Q($f: String, $n: Int, $a: String) { ${lowerFirst(object)}(filter: $f, first: $n, after: $a) { edges { node { UID } } } }`;
    variables = {
      f: random() < 0.5 ? randomFilter(random, fields, objects) : randomJson(random, 2),
      n: randomJson(random, 1),
      a: randomJson(random, 1),
    };
  } else if (roll < 0.5) {
    label = "by id";
    query = `{ ${lowerFirst(object)}ById(UID: ${value()}) { ${pick(random, fields)} } }`;
  } else if (roll < 0.75) {
    label = "mutation";
    const inputs = info.inputs.get(object) ?? [];
    const input = () =>
      `{${[
        ...new Set(
          Array.from({ length: 1 + Math.floor(random() * 4) }, () =>
            random() < 0.9 ? pick(random, [...inputs, "UID"]) : nastyString(random).slice(0, 30),
          ),
        ),
      ]
        .map((f) => `${f}: ${value()}`)
        .join(", ")}}`;
    const ops = Array.from({ length: random() < 0.05 ? 120 : 1 + Math.floor(random() * 4) }, (_, i) => {
      const kind = pick(random, ["insert", "update", "upsert", "delete"]);
      const alias =
        random() < 0.2
          ? `, idAlias: ${JSON.stringify(random() < 0.5 ? "a" : nastyString(random).slice(0, 100))}`
          : "";
      if (kind === "delete") return `o${i}: delete${object}(UID: ${value()})`;
      const key =
        kind === "upsert"
          ? `, keyField: ${JSON.stringify(random() < 0.5 ? pick(random, fields) : nastyString(random).slice(0, 40))}`
          : "";
      return `o${i}: ${kind}${object}(input: ${input()}${kind === "upsert" || kind === "insert" ? alias : ""}${key})`;
    });
    query = `mutation { schema { ${ops.join(" ")} } }`;
  } else if (roll < 0.8) {
    label = "mutation with variables";
    query = `mutation M($i: New${object}!) { schema { a: insert${object}(input: $i) } }`;
    variables = {
      i: mutateValue(
        random,
        Object.fromEntries(
          (info.inputs.get(object) ?? []).slice(0, 4).map((f) => [f, randomJson(random, 1)]),
        ),
      ),
    };
  } else if (roll < 0.85) {
    label = "deep document";
    const depth = pick(random, [13, 40, 400]);
    query = `{ jobs { edges { node { ${deepSelection(depth, "Region", "Jobs")} } } } }`;
  } else if (roll < 0.9) {
    label = "pathological document";
    query = pick(random, [
      "{".repeat(pick(random, [1000, 100_000])),
      `{ ${Array.from({ length: 5000 }, (_, i) => `a${i}: __typename`).join(" ")} }`,
      "fragment A on Query { ...B } fragment B on Query { ...A } { ...A }",
      `{ __schema { types { ${"ofType { ".repeat(60)}name${" }".repeat(60)} } } }`,
      `query ${"($v: Int)".repeat(3)} { __typename }`,
      `{ regions @skip(if: $nope) { edges { node { UID } } } }`,
      "subscription { schemaJobs { operation } }",
      "x".repeat(900_000),
    ]);
  } else {
    label = "mutated document";
    query = mutateText(
      random,
      mutateText(
        random,
        `mutation { schema { insertRegions(input: {Name: "n", Timezone: "UTC"}) } } { regions(filter: "Name LIKE 'N%'") { edges { node { UID Name } } } }`,
      ),
    );
  }
  if (random() < 0.15) {
    const params = new URLSearchParams({
      query,
      variables: random() < 0.5 ? JSON.stringify(variables ?? {}) : nastyString(random).slice(0, 1000),
    });
    return { label: `GET ${label}`, method: "GET", path: `/graphql/graphql?${params}`, headers: {} };
  }
  return {
    label,
    method: "POST",
    path: "/graphql/graphql",
    body: graphqlBody(random, query, variables),
    headers: {},
  };
}

function restRequest(random: Random, fixtures: Fixtures, info: SchemaInfo): FuzzRequest {
  const id = () =>
    random() < 0.6 ? pick(random, fixtures.ids) : segment(nastyString(random).slice(0, 3000));
  const name = () => (random() < 0.6 ? pick(random, fixtures.names) : nastyString(random).slice(0, 500));
  const objects = [...info.objects.keys()];
  const subscription = () => {
    const object = pick(random, objects);
    const fields = info.objects.get(object) ?? ["UID"];
    return `subscription { schema${object}(filter: ${JSON.stringify(randomFilter(random, fields, objects))}, operation: ${pick(random, ["INSERT", "[INSERT, DELETE]", "BOGUS", '"UPDATE"'])}) { operation timestamp data { ${pick(random, fields)} } previous { ${pick(random, fields)} } } }`;
  };
  const endpoints: [string, string, (() => unknown) | null][] = [
    ["GET", "/health", null],
    ["GET", "/auth/whoami", null],
    [
      "POST",
      "/auth/token",
      () => ({ expiry: "2030-01-01T00:00:00Z", roles: ["scheduler"], description: "d" }),
    ],
    ["GET", "/auth/tokens", null],
    ["DELETE", `/auth/token/${id()}`, null],
    [
      "POST",
      "/custom/standalone/schemas",
      () => ({
        name: `F${Math.floor(random() * 1e6)}`,
        fields: [
          {
            name: "A",
            column: {
              type: pick(random, ["string", "int", "picklist", "reference", "decimal", "bogus"]),
              items: ["a"],
              referenceSchemaName: name(),
              precision: 40,
            },
          },
        ],
      }),
    ],
    [
      "POST",
      "/custom/standalone/fields",
      () => ({
        schemaName: name(),
        name: `G${Math.floor(random() * 1e6)}`,
        column: { type: "string", maxLength: 10, unique: random() < 0.5 },
      }),
    ],
    [pick(random, ["POST", "DELETE"]), `/custom/standalone/track/${id()}`, null],
    [pick(random, ["POST", "DELETE"]), `/custom/standalone/schema/${id()}/track`, null],
    ["GET", "/custom/schemas", null],
    ["DELETE", `/custom/standalone/schema/${id()}`, null],
    ["DELETE", `/custom/standalone/field/${id()}`, null],
    [
      "POST",
      "/configuration/extension",
      () => ({
        key: pick(random, ["K1", "PLAIN", "S"]),
        value: "v",
        configType: pick(random, ["plain-text", "secret"]),
      }),
    ],
    ["GET", "/configuration/extension", null],
    [pick(random, ["GET", "DELETE"]), `/configuration/extension/${segment(name())}`, null],
    ["GET", "/graphql/schema", null],
    [
      "POST",
      "/webhooks",
      () => ({
        name: `w${Math.floor(random() * 1e6)}`,
        url: pick(random, [
          "http://127.0.0.1:9/x",
          "https://{{ HOST }}/x",
          "ftp://x",
          "http://[::1]:9/",
          nastyString(random),
        ]),
        type: "graphql",
        query: subscription(),
        headers: { "X-A": "{{ PLAIN }}" },
      }),
    ],
    ["GET", "/webhooks", null],
    [pick(random, ["GET", "DELETE"]), `/webhooks/${id()}`, null],
    [
      "PUT",
      `/webhooks/${id()}`,
      () => ({ name: "fuzz-hook", url: "http://127.0.0.1:9/y", type: "graphql", query: subscription() }),
    ],
    [
      "GET",
      `/webhooks/${id()}/deliveries?${new URLSearchParams({ status: pick(random, ["failed", "pending", "x"]), limit: String(graphqlValue(random)), cursor: nastyString(random).slice(0, 300), since: pick(random, ["2024-01-01T00:00:00Z", "yesterday"]) })}`,
      null,
    ],
    ["POST", `/webhooks/${id()}/deliveries/${id()}/retry`, null],
    [
      "POST",
      `/webhooks/${id()}/recover`,
      () => ({ since: pick(random, ["2024-01-01T00:00:00Z", "2024-13-01", 5]) }),
    ],
    [
      pick(random, ["GET", "POST", "PATCH", "OPTIONS", "HEAD"]),
      `/${segment(nastyString(random).slice(0, 200))}`,
      null,
    ],
  ];
  const [method, path, body] = pick(random, endpoints);
  const valid = body?.();
  const roll = random();
  let text: string | undefined;
  if (roll < 0.05) text = deepJson(pick(random, [1000, 100_000, 1_000_000]), random);
  else if (roll < 0.1)
    text = pick(random, ["{", "", "null", "[]", "\u0000\u0001", '{"a":1,"a":2}', nastyString(random)]);
  else if (roll < 0.15) text = JSON.stringify(randomJson(random, 4));
  else if (valid !== undefined) text = JSON.stringify(random() < 0.8 ? mutateValue(random, valid) : valid);
  else if (random() < 0.2) text = JSON.stringify(randomJson(random, 2));
  return {
    label: `${method} ${path.split("?")[0]?.slice(0, 40)}`,
    method,
    path,
    body: method === "GET" || method === "HEAD" ? undefined : text,
    headers: {},
  };
}
