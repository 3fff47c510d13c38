import { providerUrl, type BackendProvider } from '@conclave/core/spi';
import { PostgresBackend } from './postgres-backend';

/**
 * `postgres://user:pass@host:5432/db?table=…` (or `postgresql://`) → a `PostgresBackend`. The
 * URL's parameters (`table`, `schema`, `connectionLimit`, `sslmode`) are checked by `parsePostgresUri`.
 */
export const postgresProvider: BackendProvider = {
  kind: 'postgres',
  schemes: ['postgres', 'postgresql'],
  urlForms: [{ form: 'postgres://user:pass@host:5432/db[?table=T&schema=S&connectionLimit=N&sslmode=require]', what: 'PostgreSQL lease row (also postgresql://)' }],
  fromUrl(url) {
    return new PostgresBackend({ uri: providerUrl(postgresProvider, url) });
  },
};
