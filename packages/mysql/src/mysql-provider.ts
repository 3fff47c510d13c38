import { providerUrl, type BackendProvider } from '@conclave/core/spi';
import { MysqlBackend } from './mysql-backend';

/**
 * `mysql://user:pass@host:3306/db?table=…` (or `mariadb://`) → a `MysqlBackend`. The URL's
 * parameters (`table`, `connectionLimit`, the TLS ones) are checked by `parseMysqlUri`.
 */
export const mysqlProvider: BackendProvider = {
  kind: 'mysql',
  schemes: ['mysql', 'mariadb'],
  urlForms: [{ form: 'mysql://user:pass@host:3306/db[?table=T&connectionLimit=N&ssl=true&sslCa=PATH…]', what: 'MySQL / MariaDB lease row (also mariadb://)' }],
  fromUrl(url) {
    return new MysqlBackend({ uri: providerUrl(mysqlProvider, url) });
  },
};
