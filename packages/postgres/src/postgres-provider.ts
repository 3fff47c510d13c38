import { providerUrl, type BackendProvider } from '@conclave/core';
import { PostgresBackend } from './postgres-backend';

/**
 * `postgres://user:pass@host:5432/db?table=…` (or `postgresql://`) → a `PostgresBackend`. The
 * URL's parameters (`table`, `schema`, `connectionLimit`, `sslmode`) are checked by `parsePostgresUri`.
 */
export const postgresProvider: BackendProvider = {
  kind: 'postgres',
  schemes: ['postgres', 'postgresql'],
  fromUrl(url) {
    return new PostgresBackend({ uri: providerUrl(postgresProvider, url) });
  },
};
