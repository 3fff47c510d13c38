import { ConclaveError, redactUrl } from '@conclave/core';
import { describeValue } from '@conclave/core/spi';

/** How a dialect's URLs look, for `parseServerUrl` and its messages. */
export interface ServerUrlForm {
  kind: string;
  /** What messages call it: `MySQL URI`, `PostgreSQL URL`. */
  what: string;
  /** The schemes accepted, without `://`; messages show the first in their example. */
  schemes: readonly string[];
  defaultPort: number;
}

/** The parts of `scheme://user:pass@host:port/database?…` every SQL server URL has. */
export interface ServerUrl {
  host: string;
  port: number;
  database: string;
  user?: string;
  password?: string;
  /** The query parameters, which each dialect reads (and refuses when unknown). */
  params: URLSearchParams;
  /** The URL, password hidden, quoted: what messages about it show. */
  where: string;
}

/**
 * Parses `scheme://user:pass@host:port/database?…`: user and password percent-decoded, the
 * database required. Throws `INVALID_URL`, never quoting the password; no I/O.
 */
export function parseServerUrl(uri: unknown, form: ServerUrlForm): ServerUrl {
  const { kind, what } = form;
  if (typeof uri !== 'string' || uri.length === 0) {
    throw new ConclaveError('INVALID_URL', `uri must be a non-empty string, got ${describeValue(uri)}`, { backend: kind });
  }
  // The user info ends at the last `@`; a raw `/ ? #` in it would make the URL parser split the
  // password into host, path or query, which messages then quote.
  const afterScheme = uri.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  const at = afterScheme.lastIndexOf('@');
  if (at !== -1 && /[/?#]/.test(afterScheme.slice(0, at))) {
    throw new ConclaveError('INVALID_URL', `a "/", "?" or "#" in the user or password must be percent-encoded: ${redact(uri)}`, { backend: kind });
  }
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    // No cause: Node's "Invalid URL" error keeps the whole input, password included.
    throw new ConclaveError('INVALID_URL', `cannot parse the ${what} ${redact(uri)}`, { backend: kind });
  }
  if (!form.schemes.some((scheme) => url.protocol === `${scheme}:`)) {
    throw new ConclaveError('INVALID_URL', `${what} must start with ${form.schemes.map((s) => `${s}://`).join(' or ')}, got ${redact(uri)}`, { backend: kind });
  }
  if (!url.hostname) throw new ConclaveError('INVALID_URL', `${what} has no host: ${redact(uri)}`, { backend: kind });
  const database = safeDecode(url.pathname.replace(/^\//, ''), uri, form);
  // A "/" or "@" here is a password's raw character that made the URL split elsewhere.
  if (!database || database.includes('/') || database.includes('@')) {
    throw new ConclaveError('INVALID_URL', `${what} must name one database (${form.schemes[0]}://host:${form.defaultPort}/db): ${redact(uri)}`, {
      backend: kind,
    });
  }
  const parsed: ServerUrl = {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port === '' ? form.defaultPort : Number(url.port),
    database,
    params: url.searchParams,
    where: '',
  };
  if (url.username) parsed.user = safeDecode(url.username, uri, form);
  if (url.password) parsed.password = safeDecode(url.password, uri, form);
  parsed.where = redact(uri);
  return parsed;
}

function safeDecode(part: string, uri: string, form: ServerUrlForm): string {
  try {
    return decodeURIComponent(part);
  } catch (cause) {
    // The cause is a bare "URI malformed": it quotes nothing.
    throw new ConclaveError('INVALID_URL', `bad percent-encoding in the ${form.what} ${redact(uri)}`, { backend: form.kind, cause });
  }
}

/** The URI, password hidden, quoted for a message. */
function redact(uri: string): string {
  return JSON.stringify(redactUrl(uri));
}
