import { describe, expect, test } from "bun:test";
import type { DeliveryJob } from "../../common/delivery-job.ts";
import {
  buildDeliveryRequest,
  type RequestInput,
  USER_AGENT,
  variablesOf,
} from "../../dispatcher/build-request.ts";
import { signPayload } from "../../dispatcher/sign-payload.ts";
import { UndeliverableError } from "../../dispatcher/undeliverable-error.ts";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const job: DeliveryJob = {
  tenantId: "t1",
  webhookId: "w1",
  eventId: "m1",
  deliveryId: "d-123",
  body: [
    { data: { schemaJobs: { operation: "INSERT" } } },
    { data: { schemaJobs: { operation: "UPDATE" } } },
  ],
  committedAt: 1,
};
const input = (
  webhook: Partial<RequestInput["webhook"]>,
  variables: Record<string, string> = {},
): RequestInput => ({
  job,
  webhook: { id: "w1", url: "https://hooks.example/in", headers: {}, ...webhook },
  variables: new Map(Object.entries(variables)),
  secret: SECRET,
  timestampSeconds: 1_700_000_000,
});
const undeliverable = (request: RequestInput) => {
  try {
    buildDeliveryRequest(request);
    return null;
  } catch (error) {
    if (!(error instanceof UndeliverableError)) throw error;
    return [error.code, error.message];
  }
};

describe("buildDeliveryRequest", () => {
  test("renders templates, sends the body as JSON and signs it", () => {
    const request = buildDeliveryRequest(
      input(
        {
          url: "https://{{ HOST }}/hooks/{{PATH}}?k=1",
          headers: { Authorization: "Bearer {{ TOKEN }}", "X-Plain": "x" },
        },
        { HOST: "hooks.example:8443", PATH: "in", TOKEN: "s3cret" },
      ),
    );
    expect(request.url.href).toBe("https://hooks.example:8443/hooks/in?k=1");
    expect(request.endpoint).toBe("hooks.example:8443");
    expect(request.body).toBe(JSON.stringify(job.body));
    expect(request.headers).toEqual({
      authorization: "Bearer s3cret",
      "x-plain": "x",
      "content-type": "application/json",
      "user-agent": USER_AGENT,
      "service-webhook-id": "w1",
      "service-request-id": "d-123",
      "webhook-id": "d-123",
      "webhook-timestamp": "1700000000",
      "webhook-signature": signPayload(SECRET, "d-123", 1_700_000_000, request.body),
    });
  });

  test("the webhook's headers cannot replace identity, signature or transport headers", () => {
    const request = buildDeliveryRequest(
      input({
        headers: { "Webhook-Signature": "v1,forged", "service-request-id": "x", Host: "evil", "X-Ok": "1" },
      }),
    );
    expect(request.headers["webhook-signature"]).not.toBe("v1,forged");
    expect(request.headers["service-request-id"]).toBe("d-123");
    expect(request.headers.host).toBeUndefined();
    expect(request.headers["x-ok"]).toBe("1");
  });

  test.each([
    ["https://hooks.example/", "hooks.example:443"],
    ["http://hooks.example/", "hooks.example:80"],
    ["https://[::1]:9000/", "[::1]:9000"],
  ])("endpoint of %s is %s", (url, endpoint) => {
    expect(buildDeliveryRequest(input({ url })).endpoint).toBe(endpoint);
  });

  test.each([
    [
      "every missing variable is named",
      input({ url: "https://{{ HOST }}/", headers: { A: "{{ TOKEN }}", B: "{{ HOST }}" } }),
      ["missing_variables", "undefined config variables: HOST, TOKEN"],
    ],
    [
      "a URL that does not render to a URL",
      input({ url: "{{ BASE }}/in" }, { BASE: "not a url" }),
      ["invalid_url", "the webhook URL {{ BASE }}/in does not render to a valid URL"],
    ],
    [
      "a header value with a line break (never quoted: it may be a secret)",
      input({ headers: { "X-Key": "{{ KEY }}" } }, { KEY: "abc\r\nInjected: 1" }),
      ["invalid_header", "the webhook header X-Key does not render to a valid value"],
    ],
    [
      "a broken secret",
      { ...input({}), secret: "whsec_!!" },
      ["invalid_secret", "the webhook secret is not whsec_<base64>"],
    ],
  ] as [string, RequestInput, [string, string]][])("%s", (_, request, expected) => {
    expect(undeliverable(request)).toEqual(expected);
  });

  test("while a rotated-out secret's grace lasts, both sign: the current one first, space-separated", () => {
    const previous = "whsec_c2VjcmV0LWJlZm9yZS1yb3RhdGlvbg==";
    const request = buildDeliveryRequest({ ...input({}), previousSecret: previous });
    const body = JSON.stringify(job.body);
    expect(request.headers["webhook-signature"]).toBe(
      `${signPayload(SECRET, "d-123", 1_700_000_000, body)} ${signPayload(previous, "d-123", 1_700_000_000, body)}`,
    );
    expect(buildDeliveryRequest({ ...input({}), previousSecret: null }).headers["webhook-signature"]).toBe(
      signPayload(SECRET, "d-123", 1_700_000_000, body),
    );
  });

  test("variablesOf lists URL and header variables once", () => {
    expect(variablesOf({ id: "w", url: "https://{{A}}/{{B}}", headers: { x: "{{ B }}{{C}}" } })).toEqual([
      "A",
      "B",
      "C",
    ]);
  });
});
