/**
 * The delivery-log aggregate of the store port, as the API sees it: the
 * deliveries the change feed logs (pending) and their attempts, which the
 * dispatcher writes through its own port (common/delivery-log/delivery-store.ts).
 * Both processes use the log, so its contract and its engines' implementations
 * live in common/delivery-log/; this file names the API's part of it.
 */
export {
  DELIVERY_STATUSES,
  type DeliveryAttempt,
  type DeliveryLogReader,
  type DeliveryLogWriter,
  type DeliveryQuery,
  type DeliveryRecord,
  type DeliveryStatus,
} from "../../../common/delivery-log/delivery-log.ts";
