/**
 * Keeps secret config variable values out of what the delivery log and the
 * log lines say about an attempt: the secret values a request was rendered
 * with in, a Redactor out, which replaces each value — in every form a URL,
 * a resolver or a receiver may have turned it into — with its `{{ NAME }}`
 * placeholder. Pure.
 */

export interface Redactor {
  /** `text` with every form of every secret value replaced by `{{ NAME }}`. */
  redact(text: string): string;
  /**
   * UTF-8 bytes of the longest form: a text cut at N bytes is redacted safely when
   * N + `reach` bytes were read, redacted, then cut (a value cut in two is not recognised).
   */
  reach: number;
}

/** The redactor of a request rendered without secrets. */
export const NO_SECRETS: Redactor = Object.freeze({ redact: (text: string) => text, reach: 0 });

/** `build()`, or null when it throws (the URL parser refusing the text, a lone surrogate). */
const attempt = (build: () => string): string | null => {
  try {
    return build();
  } catch {
    return null;
  }
};

/** `form` when it encodes the whole of `value` (a `?` or `#` in a path ends it early, for one). */
const whole = (value: string, build: () => string): string | null => {
  const form = attempt(build);
  return form !== null && attempt(() => decodeURIComponent(form)) === value ? form : null;
};

/** `value` as the host of a URL (lower case, IDNA), when it can be one whole. */
const hostForm = (value: string): string | null => {
  if (/[/?#@:\\]/.test(value)) return null;
  const host = attempt(() => new URL(`http://${value}.h/`).hostname);
  return host?.endsWith(".h") ? host.slice(0, -2) : null;
};

/**
 * The forms a value takes on its way into a request and back into a message:
 * as written; percent-encoded as the URL parser encodes a path, a query or a
 * password, and as encodeURI/encodeURIComponent do; as a host name (lower
 * case, IDNA); escaped inside a JSON string (a receiver echoing it).
 * Letter case is ignored when matching (host names are lower-cased, %2f = %2F).
 */
export function secretForms(value: string): string[] {
  const forms = [
    value,
    whole(value, () => encodeURIComponent(value)),
    whole(value, () => encodeURI(value)),
    whole(value, () => new URL(`http://h/${value}`).pathname.slice(1)),
    whole(value, () => new URL(`http://h/?${value}`).search.slice(1)),
    whole(value, () => new URL(`http://u:${value}@h/`).password),
    hostForm(value),
    JSON.stringify(value).slice(1, -1),
  ];
  return [...new Set(forms.filter((form): form is string => form !== null && form !== ""))];
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * A redactor for `secrets` (variable name → value). Longer forms are matched
 * first, so a value holding another is redacted whole. Empty values are skipped.
 */
export function createRedactor(secrets: ReadonlyMap<string, string>): Redactor {
  const owner = new Map<string, string>();
  for (const [name, value] of secrets) {
    for (const form of secretForms(value)) {
      const key = form.toLowerCase();
      if (!owner.has(key)) owner.set(key, `{{ ${name} }}`);
    }
  }
  if (owner.size === 0) return NO_SECRETS;
  const forms = [...owner.keys()].sort((a, b) => b.length - a.length);
  const pattern = new RegExp(forms.map(escapeRegExp).join("|"), "gi");
  const placeholder = (match: string) => owner.get(match.toLowerCase()) ?? "{{ secret }}";
  return {
    redact: (text) => text.replace(pattern, placeholder),
    reach: Math.max(...forms.map((form) => Buffer.byteLength(form))),
  };
}
