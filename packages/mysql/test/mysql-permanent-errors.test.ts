import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import { createConnection, type Connection } from 'mysql2/promise';
import { Elector, type ConclaveError, type ConclaveErrorCode } from '@conclave/core';
import { startRejection } from '@conclave/test-harness';
import { MysqlBackend } from '@conclave/mysql';
import { BASE_URI, dropTable, uniqueElection, uniqueTable } from './mysql-test-env';

// A configuration that can never work makes start() reject at once with its code, rather than
// leave a follower retrying in the background (see the README, `start()` and `ConclaveError`).
// The 2 s bound tells "at once" from "after waiting": a refusal is one round trip, while a
// candidate retrying, or a call waiting out its timeout, takes at least the 3 s lease or query
// timeout these tests use; 2 s leaves a loaded machine most of a second per round trip.

const base = new URL(BASE_URI);
const user = `cv_${randomBytes(4).toString('hex')}`;
const password = `pw-${randomBytes(8).toString('hex')}`;
const table = uniqueTable('permanent');
let root: Connection;
const opened: Array<{ elector: Elector; backend: MysqlBackend }> = [];

/** The shared server's URI with another user, password or database. */
function uriWith(change: { user?: string; password?: string; database?: string }): string {
  const url = new URL(BASE_URI);
  if (change.user !== undefined) url.username = change.user;
  if (change.password !== undefined) url.password = change.password;
  if (change.database !== undefined) url.pathname = `/${change.database}`;
  url.searchParams.set('table', table);
  return url.toString();
}

function elector(uri: string): Elector {
  const backend = new MysqlBackend({ uri });
  const e = new Elector({ backend, election: uniqueElection('permanent'), leaseMs: 3_000, logger: null });
  opened.push({ elector: e, backend });
  return e;
}

function occurrences(text: string, part: string): number {
  return text.split(part).length - 1;
}

/** The properties every test checks: the code, within 2 s, the cause named once, no password. */
function expectRefusal({ err, ms }: { err: ConclaveError; ms: number }, code: ConclaveErrorCode, cause: string, e: Elector) {
  expect(err.code).toBe(code);
  expect(ms).toBeLessThan(2_000);
  expect(occurrences(err.message, cause)).toBe(1);
  expect(err.message).not.toContain(password);
  expect(err.message).not.toContain('wrong-secret');
  expect(e.state.role).toBe('stopped');
}

beforeAll(async () => {
  root = await createConnection({
    host: base.hostname,
    port: Number(base.port || 3306),
    user: decodeURIComponent(base.username || 'root'),
    password: decodeURIComponent(base.password),
    database: base.pathname.slice(1),
  });
  await root.query('CREATE USER ?@? IDENTIFIED BY ?', [user, '%', password]);
});

afterEach(async () => {
  for (const { elector: e, backend } of opened.splice(0)) {
    await e.stop();
    await backend.close();
  }
});

afterAll(async () => {
  await root.query('DROP USER IF EXISTS ?@?', [user, '%']);
  await dropTable(table);
  await root.end();
});

describe('MySQL: start() rejects a configuration that can never work', () => {
  test('a wrong password: BACKEND_AUTH within 2 s, naming the refusal once and never the password', async () => {
    const e = elector(uriWith({ user, password: 'wrong-secret' }));
    const rejection = await startRejection(e);
    expectRefusal(rejection, 'BACKEND_AUTH', `Access denied for user '${user}'`, e);
  });

  test('an unknown database: BACKEND_MISCONFIGURED within 2 s, naming the database once', async () => {
    const database = `nodb_${randomBytes(4).toString('hex')}`;
    const e = elector(uriWith({ database }));
    const rejection = await startRejection(e);
    expectRefusal(rejection, 'BACKEND_MISCONFIGURED', `Unknown database '${database}'`, e);
  });

  test('a user with no privilege on the database (USAGE only): BACKEND_MISCONFIGURED within 2 s, naming the denial once', async () => {
    const e = elector(uriWith({ user, password }));
    const rejection = await startRejection(e);
    expectRefusal(rejection, 'BACKEND_MISCONFIGURED', `Access denied for user '${user}'`, e);
  });

  test('a user who may only read the lease table: BACKEND_MISCONFIGURED within 2 s, naming the denied command once', async () => {
    // The table exists (made by root), and the user may read it but not create or write it.
    const owner = new MysqlBackend({ uri: uriWith({}) });
    await owner.ensureSchema();
    await owner.close();
    await root.query(`GRANT SELECT ON \`${base.pathname.slice(1)}\`.\`${table}\` TO ?@?`, [user, '%']);
    const e = elector(uriWith({ user, password }));
    const rejection = await startRejection(e);
    expectRefusal(rejection, 'BACKEND_MISCONFIGURED', 'command denied to user', e);
  });
});
