import { randomBytes } from 'node:crypto';
import { createConnection, type Connection } from 'mysql2/promise';
import { MysqlBackend } from '@conclave/mysql';
import { assertBuilt, expectOneErrorLine, killAll, MYSQL_URL, runConclave, uniqueElection } from './cli-process';

/**
 * A configuration the server can never serve ends `campaign` and `run` with one error line and
 * exit 1, the lease never campaigned for again. The case: a MariaDB user that may read the
 * election table (and run its CREATE TABLE IF NOT EXISTS: the start-up probe passes) but not write
 * it (the first campaign is refused with BACKEND_MISCONFIGURED).
 */

const user = `cvcli_${randomBytes(4).toString('hex')}`;
const password = `pw-${randomBytes(8).toString('hex')}`;
const table = `cli_readonly_${randomBytes(3).toString('hex')}`;
let root: Connection;
let readOnlyUrl: string;

beforeAll(async () => {
  assertBuilt();
  const base = new URL(MYSQL_URL);
  base.searchParams.set('table', table);
  // The backend creates its table on first use: as root, before the user gets rights on it.
  const creator = new MysqlBackend({ uri: base.toString() });
  await creator.getLeader('any');
  await creator.close();
  root = await createConnection({ host: base.hostname, port: Number(base.port || 3306), user: 'root', database: base.pathname.slice(1) });
  await root.query('CREATE USER ?@? IDENTIFIED BY ?', [user, '%', password]);
  await root.query(`GRANT SELECT, CREATE ON \`${base.pathname.slice(1)}\`.\`${table}\` TO ?@?`, [user, '%']);
  const url = new URL(base.toString());
  url.username = user;
  url.password = password;
  readOnlyUrl = url.toString();
});

afterEach(killAll);

afterAll(async () => {
  await root.query('DROP USER IF EXISTS ?@?', [user, '%']);
  await root.query(`DROP TABLE IF EXISTS \`${table}\``);
  await root.end();
});

// A lease far longer than the bound: a command that went on campaigning would still be running.
const LEASE = ['--lease-ms', '60000'];

test.each([
  ['campaign', ['campaign', '--id', 'a']],
  ['run', ['run', '--id', 'a', '--', process.execPath, '-e', 'setTimeout(() => {}, 60000)']],
])('%s with a user refused the write: exit 1 with one line naming the refusal, no password', async (_name, args) => {
  const election = uniqueElection('readonly');
  const started = Date.now();
  const r = await runConclave([...args.slice(0, 1), '--backend', readOnlyUrl, '--election', election, ...LEASE, ...args.slice(1)], 30_000);
  expect(r.code).toBe(1);
  const line = expectOneErrorLine(r);
  expect(line).toMatch(/INSERT, UPDATE command denied/);
  expect(line).not.toContain(password);
  // Well within the lease: it did not wait for anything.
  expect(Date.now() - started).toBeLessThan(30_000);
});
