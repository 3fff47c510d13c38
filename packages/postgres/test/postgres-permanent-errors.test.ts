import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import { Elector, type ConclaveError, type ConclaveErrorCode } from '@conclave/core';
import { startRejection } from '@conclave/test-harness';
import { PostgresBackend } from '@conclave/postgres';
import { startPostgres, type PostgresServer } from '@conclave/postgres/testing';
import { BASE_URI, dropTable, uniqueElection, uniqueTable, withClient } from './postgres-test-env';

// A configuration that can never work makes start() reject at once with its code, rather than
// leave a follower retrying in the background (see the README, `start()` and `ConclaveError`).
// The 2 s bound tells "at once" from "after waiting": a refusal is one round trip, while a
// candidate retrying, or a call waiting out its timeout, takes at least the 3 s lease or query
// timeout these tests use; 2 s leaves a loaded machine most of a second per round trip.

const role = `cv_${randomBytes(4).toString('hex')}`;
const password = `pw-${randomBytes(8).toString('hex')}`;
const wrongPassword = `wrong-${randomBytes(8).toString('hex')}`;
const table = uniqueTable('permanent');
const opened: Array<{ elector: Elector; backend: PostgresBackend }> = [];

/** `uri` with another user, password or database, and this file's table (and `schema`, if given). */
function uriWith(uri: string, change: { user?: string; password?: string; database?: string; schema?: string }): string {
  const url = new URL(uri);
  if (change.user !== undefined) url.username = change.user;
  if (change.password !== undefined) url.password = change.password;
  if (change.database !== undefined) url.pathname = `/${change.database}`;
  url.searchParams.set('table', table);
  if (change.schema !== undefined) url.searchParams.set('schema', change.schema);
  return url.toString();
}

function elector(uri: string): Elector {
  const backend = new PostgresBackend({ uri });
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
  expect(err.message).not.toContain(wrongPassword);
  expect(e.state.role).toBe('stopped');
}

afterEach(async () => {
  for (const { elector: e, backend } of opened.splice(0)) {
    await e.stop();
    await backend.close();
  }
});

describe('PostgreSQL: start() rejects a configuration that can never work', () => {
  describe('on a server with password authentication', () => {
    let server: PostgresServer;
    beforeAll(async () => {
      server = await startPostgres({ password });
    }, 90_000);
    afterAll(async () => {
      await server?.stop();
    });

    test('a wrong password: BACKEND_AUTH within 2 s, naming the refusal once and never the password', async () => {
      const e = elector(uriWith(server.uri, { password: wrongPassword }));
      const rejection = await startRejection(e);
      expectRefusal(rejection, 'BACKEND_AUTH', 'password authentication failed for user "root"', e);
    });

    test('with the right password, the same URI elects', async () => {
      const e = elector(uriWith(server.uri, {}));
      await e.start();
      expect(e.isLeader()).toBe(true);
    });
  });

  describe('on the shared server', () => {
    beforeAll(async () => {
      await withClient((c) => c.query(`CREATE ROLE "${role}" LOGIN PASSWORD '${password}'`));
    });
    afterAll(async () => {
      await dropTable(table);
      await withClient((c) => c.query(`DROP ROLE IF EXISTS "${role}"`));
    });

    test('an unknown database: BACKEND_MISCONFIGURED within 2 s, naming the database once', async () => {
      const database = `nodb_${randomBytes(4).toString('hex')}`;
      const e = elector(uriWith(BASE_URI, { database }));
      const rejection = await startRejection(e);
      expectRefusal(rejection, 'BACKEND_MISCONFIGURED', `database "${database}" does not exist`, e);
    });

    test('an unknown schema: BACKEND_MISCONFIGURED within 2 s, naming the schema once', async () => {
      const schema = `noschema_${randomBytes(4).toString('hex')}`;
      const e = elector(uriWith(BASE_URI, { schema }));
      const rejection = await startRejection(e);
      expectRefusal(rejection, 'BACKEND_MISCONFIGURED', `schema "${schema}" does not exist`, e);
    });

    test('a role with no privileges that would have to create the table: BACKEND_MISCONFIGURED within 2 s, naming the denial once', async () => {
      const e = elector(uriWith(BASE_URI, { user: role, password }));
      const rejection = await startRejection(e);
      expectRefusal(rejection, 'BACKEND_MISCONFIGURED', 'permission denied for schema public', e);
    });

    test('a role that may only read the existing lease table: BACKEND_MISCONFIGURED within 2 s, naming the denial once', async () => {
      const owner = new PostgresBackend({ uri: uriWith(BASE_URI, {}) });
      await owner.ensureSchema();
      await owner.close();
      await withClient((c) => c.query(`GRANT SELECT ON "${table}" TO "${role}"`));
      const e = elector(uriWith(BASE_URI, { user: role, password }));
      const rejection = await startRejection(e);
      expectRefusal(rejection, 'BACKEND_MISCONFIGURED', 'permission denied for', e);
    });
  });
});
