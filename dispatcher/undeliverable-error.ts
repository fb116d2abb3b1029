/** The typed error for a delivery that cannot be sent at all; its message goes to the delivery log. */

export type UndeliverableCode =
  | "webhook_deleted"
  | "webhook_disabled"
  | "missing_variables"
  | "invalid_url"
  | "invalid_header"
  | "invalid_secret";

/**
 * A delivery that must not be POSTed: the webhook is gone or disabled, or its
 * definition cannot be rendered into a request. Final: retrying cannot help
 * until an administrator changes something (then retry or recover the delivery).
 */
export class UndeliverableError extends Error {
  constructor(
    readonly code: UndeliverableCode,
    message: string,
  ) {
    super(message);
    this.name = "UndeliverableError";
  }
}
