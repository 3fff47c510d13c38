/** What a hidden secret is shown as. */
export const REDACTED = '***';

// Query parameters whose value is a secret wherever they appear (`?password=…`, `&sslKey=…`).
const SECRET_PARAM = /^(?:.*pass(?:word)?|pwd|.*secret|.*token|auth|.*key)$/i;

/**
 * `url` as it may be shown in a message or a log line: the password of its user info, the value
 * of every password-like query parameter, and, in a `migrate:` URL, the same inside the
 * percent-encoded `from=` and `to=` URLs are replaced by `***`. Never throws.
 *
 * The user info is found lexically rather than by WHATWG `URL` alone: a password holding a raw
 * `@ / ? #` makes `URL` split the text elsewhere than the driver would (or fail), and the part it
 * then calls the host is the password. So everything between `//` and the last `@` is user info;
 * only the part before its first `:` (the user name) is kept, when there is one. Hiding too much
 * is the safe error. A connect string without a scheme (`user:pass@host:2181`) is treated the
 * same way. The parsers of each backend still parse every host with `URL` (or refuse the URL);
 * this function only decides what a message may show.
 */
export function redactUrl(url: string): string {
  if (typeof url !== 'string') return String(url);
  if (!/^migrate:/i.test(url) && !url.includes('://') && !url.includes('@') && /%[0-9a-f]{2}/i.test(url)) {
    // A URL percent-encoded once more (a migration's inner URL, encoded twice): redact it decoded.
    let decoded: string;
    try {
      decoded = decodeURIComponent(url);
    } catch {
      return REDACTED;
    }
    if (decoded !== url) return encodeURIComponent(redactUrl(decoded));
  }
  const migrate = /^(migrate:[^?#]*\?)(.*)$/is.exec(url);
  if (migrate) return migrate[1]! + redactQuery(migrate[2]!, true);
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url)?.[0] ?? '';
  const rest = url.slice(scheme.length);
  const at = rest.lastIndexOf('@');
  let head = '';
  let tail = rest;
  if (at !== -1) {
    const userinfo = rest.slice(0, at);
    // A `?` or `#` before the last `@`: the query (or a fragment) started inside what looks like
    // user info, so which part is a password cannot be told. Show none of it.
    if (/[?#]/.test(userinfo)) return `${scheme}${REDACTED}`;
    const colon = userinfo.indexOf(':');
    // Without a colon the whole user info may be the secret (`redis://secret@host` is how some
    // clients take a password), so it is hidden too.
    head = colon === -1 ? `${REDACTED}@` : `${hideUnsafe(userinfo.slice(0, colon))}:${REDACTED}@`;
    tail = rest.slice(at + 1);
  }
  const q = tail.indexOf('?');
  if (q !== -1) tail = tail.slice(0, q + 1) + redactQuery(tail.slice(q + 1), false);
  return scheme + head + tail;
}

/** A user name that holds something odd (`%`, `/`, …) may be part of a password split wrongly. */
function hideUnsafe(user: string): string {
  return /^[A-Za-z0-9._~-]*$/.test(user) ? user : REDACTED;
}

/** `a=b&c=d…` with secret values hidden; `from`/`to` of a migration are URLs redacted in turn. */
function redactQuery(query: string, nested: boolean): string {
  const [params, ...fragment] = query.split('#');
  // A migration's query is exactly `from=…&to=…`; anything else (a raw `&` or `#` in an inner
  // URL) cannot be split safely, so none of it is shown.
  if (nested && (fragment.length > 0 || !params!.split('&').every((pair) => /^(from|to)=/.test(pair)))) return REDACTED;
  let hiding = false;
  const redacted = params!
    .split('&')
    .map((pair) => {
      // After a secret, any further piece may be the rest of a value that held a raw `&`.
      if (hiding) return REDACTED;
      const eq = pair.indexOf('=');
      if (eq === -1) return pair.includes('@') ? REDACTED : pair;
      const key = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      const name = safeDecode(key) ?? key;
      if (nested) {
        const inner = safeDecode(value);
        // Undecodable: nothing in it can be shown safely.
        return `${key}=${inner === null ? REDACTED : encodeURIComponent(redactUrl(inner))}`;
      }
      if (!SECRET_PARAM.test(name)) return pair;
      hiding = true;
      return `${key}=${REDACTED}`;
    })
    .join('&');
  // Anything after a `#` may be the rest of a password that held a raw `#`.
  return fragment.length > 0 ? `${redacted}#${REDACTED}` : redacted;
}

/** Decodes a query component as `URLSearchParams` would; null when its `%` escapes are invalid. */
function safeDecode(component: string): string | null {
  try {
    return decodeURIComponent(component.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

/**
 * `text` (an error message, a log line) with every URL in it passed through `redactUrl`. A URL
 * runs from its scheme to the next white space.
 */
export function redactText(text: string): string {
  return text.replace(/(?:\b[a-z][a-z0-9+.-]*:\/\/|\bmigrate:)\S*/gi, (url) => redactUrl(url));
}
