import { readFileSync } from 'node:fs';
import { ConclaveError } from '@conclave/core';

const KIND = 'mysql';

/** TLS asked for in a MySQL URI; file contents are read when the pool is created. */
export interface MysqlTlsSettings {
  /** PEM file of the certificate authorities to trust (`sslCa`); default: Node's list. */
  caPath?: string;
  /** PEM client certificate (`sslCert`), with `keyPath`, for servers that ask for one. */
  certPath?: string;
  /** PEM private key of the client certificate (`sslKey`). */
  keyPath?: string;
  /** Check the server's certificate and name (`sslRejectUnauthorized`). Default true. */
  rejectUnauthorized: boolean;
}

/** The TLS parameters of a MySQL URI. */
export const MYSQL_TLS_PARAMETERS = ['ssl', 'sslCa', 'sslCert', 'sslKey', 'sslRejectUnauthorized'] as const;

/**
 * Reads the URI's TLS parameters (`ssl=true|false`, `sslCa=PATH`, `sslCert=PATH`, `sslKey=PATH`,
 * `sslRejectUnauthorized=true|false`). Any of the others implies `ssl=true`; with `ssl=false`
 * they are a contradiction. Returns null when TLS is off. Throws `INVALID_URL`; no I/O.
 */
export function parseMysqlTls(params: ReadonlyMap<string, string>, where: string): MysqlTlsSettings | null {
  const bad = (why: string) => new ConclaveError('INVALID_URL', `${why} in ${where}`, { backend: KIND });
  const bool = (key: string): boolean | undefined => {
    const value = params.get(key);
    if (value === undefined) return undefined;
    if (value !== 'true' && value !== 'false') throw bad(`${key} must be true or false, got ${JSON.stringify(value)}`);
    return value === 'true';
  };
  const path = (key: string): string | undefined => {
    const value = params.get(key);
    if (value === undefined) return undefined;
    if (value.trim() === '') throw bad(`${key} must be the path of a PEM file`);
    return value;
  };
  const ssl = bool('ssl');
  const rejectUnauthorized = bool('sslRejectUnauthorized');
  const caPath = path('sslCa');
  const certPath = path('sslCert');
  const keyPath = path('sslKey');
  const details = [caPath, certPath, keyPath, rejectUnauthorized].some((v) => v !== undefined);
  if (ssl === false) {
    if (details) throw bad('ssl=false contradicts the other ssl parameters');
    return null;
  }
  if (ssl === undefined && !details) return null;
  if ((certPath === undefined) !== (keyPath === undefined)) throw bad('sslCert and sslKey go together');
  const tls: MysqlTlsSettings = { rejectUnauthorized: rejectUnauthorized ?? true };
  if (caPath !== undefined) tls.caPath = caPath;
  if (certPath !== undefined) tls.certPath = certPath;
  if (keyPath !== undefined) tls.keyPath = keyPath;
  return tls;
}

/** mysql2's `ssl` connection option. */
export interface Mysql2SslOption {
  /** PEM of the CAs to trust (from `sslCa`); absent: Node's CAs. */
  ca?: string;
  /** PEM of the client certificate (from `sslCert`). */
  cert?: string;
  /** PEM of the client key (from `sslKey`). */
  key?: string;
  /** Whether to refuse a server certificate that does not verify (`sslRejectUnauthorized`). */
  rejectUnauthorized: boolean;
}

/**
 * mysql2's `ssl` option for the URI's TLS settings, reading the PEM files. A file that cannot be
 * read fails with `INVALID_URL` naming the parameter and the path.
 */
export function mysql2SslOption(
  tls: MysqlTlsSettings,
  readFile: (path: string) => string = (path) => readFileSync(path, 'utf8'),
): Mysql2SslOption {
  const read = (key: string, path: string): string => {
    try {
      return readFile(path);
    } catch (cause) {
      const why = (cause as NodeJS.ErrnoException).code ?? (cause instanceof Error ? cause.message : String(cause));
      throw new ConclaveError('INVALID_URL', `cannot read the MySQL URI's ${key} file ${JSON.stringify(path)} (${why})`, {
        backend: KIND,
        cause,
      });
    }
  };
  const option: Mysql2SslOption = { rejectUnauthorized: tls.rejectUnauthorized };
  if (tls.caPath !== undefined) option.ca = read('sslCa', tls.caPath);
  if (tls.certPath !== undefined) option.cert = read('sslCert', tls.certPath);
  if (tls.keyPath !== undefined) option.key = read('sslKey', tls.keyPath);
  return option;
}
