/** The form of a record's UID: a UUID of any version (the service makes v7s, a client may choose its own). */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `text` has the form of a UID. */
export const isUid = (text: string): boolean => UUID.test(text);
