/**
 * The media type of a GraphQL answer, from the request's Accept header (GraphQL over HTTP):
 * `application/graphql-response+json` when the client names it at least as highly as JSON, else
 * `application/json`, which is also the answer to no Accept, to `*` wildcards, and to an Accept
 * naming neither (answered as JSON rather than 406, as legacy clients expect). Pure.
 *
 * The two differ in status codes only: with graphql-response+json a request error (the document
 * does not parse or validate, a variable does not coerce, a persisted query is unknown) answers
 * 400 without `data`; with application/json it answers 200, as it always has here.
 */
export const GRAPHQL_RESPONSE_JSON = "application/graphql-response+json";
export const APPLICATION_JSON = "application/json";

export type GraphQLMediaType = typeof GRAPHQL_RESPONSE_JSON | typeof APPLICATION_JSON;

/** Each media range of an Accept header with its quality (1 when unstated), lower-cased. */
function mediaRanges(accept: string): { range: string; q: number }[] {
  return accept.split(",").map((part) => {
    const [range = "", ...parameters] = part.split(";").map((piece) => piece.trim().toLowerCase());
    const quality = parameters.find((parameter) => parameter.startsWith("q="));
    const q = quality === undefined ? 1 : Number(quality.slice(2));
    return { range, q: Number.isFinite(q) ? q : 0 };
  });
}

export function negotiateMediaType(accept: string | null): GraphQLMediaType {
  if (!accept) return APPLICATION_JSON;
  let graphqlQ = 0;
  let jsonQ = 0;
  let jsonSpecific = false;
  for (const { range, q } of mediaRanges(accept)) {
    if (range === GRAPHQL_RESPONSE_JSON) graphqlQ = Math.max(graphqlQ, q);
    else if (range === APPLICATION_JSON) {
      jsonQ = jsonSpecific ? Math.max(jsonQ, q) : q;
      jsonSpecific = true;
    } else if (!jsonSpecific && (range === "application/*" || range === "*/*")) jsonQ = Math.max(jsonQ, q);
  }
  return graphqlQ > 0 && graphqlQ >= jsonQ ? GRAPHQL_RESPONSE_JSON : APPLICATION_JSON;
}
