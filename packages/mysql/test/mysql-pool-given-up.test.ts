import { MysqlExecutor } from '../src/mysql-pool';
import type { MysqlPool, MysqlPoolConnection } from '../src/mysql-pool-types';

/** A pool whose connections come only when the test hands them out; it counts queries. */
function slowPool() {
  const waiting: Array<(err: unknown, connection: MysqlPoolConnection) => void> = [];
  const state = { queries: 0, released: 0 };
  const connection = {
    on: () => connection,
    query: (_sql: string, cb: (err: unknown, results: unknown) => void) => {
      state.queries++;
      cb(null, []);
    },
    release: () => {
      state.released++;
    },
    destroy: () => undefined,
  } as unknown as MysqlPoolConnection;
  const pool: MysqlPool = { getConnection: (cb) => void waiting.push(cb) };
  return { pool, state, handOut: () => waiting.splice(0).forEach((cb) => cb(null, connection)) };
}

describe('MysqlExecutor and callers that give up', () => {
  test('a call waiting for a connection is answered BACKEND_UNAVAILABLE when its caller gives up, and never sent', async () => {
    const { pool, state, handOut } = slowPool();
    const executor = new MysqlExecutor({ kind: 'pool', pool }, 5000, false);
    const controller = new AbortController();
    const call = executor.run(['UPDATE t SET holder = NULL'], 'e', controller.signal);
    await new Promise((r) => setImmediate(r));
    controller.abort(new Error('gave up'));
    await expect(call).rejects.toMatchObject({ code: 'BACKEND_UNAVAILABLE' });
    handOut();
    expect(state.queries).toBe(0);
    // The connection that came too late went back to the pool.
    expect(state.released).toBe(1);
  });

  test('a call whose caller already gave up takes no connection', async () => {
    const { pool, state, handOut } = slowPool();
    const executor = new MysqlExecutor({ kind: 'pool', pool }, 5000, false);
    const controller = new AbortController();
    controller.abort();
    await expect(executor.run(['SELECT 1'], 'e', controller.signal)).rejects.toMatchObject({ code: 'BACKEND_UNAVAILABLE' });
    handOut();
    expect(state.queries).toBe(0);
  });

  test('without a signal, a call waits for its connection as before', async () => {
    const { pool, state, handOut } = slowPool();
    const executor = new MysqlExecutor({ kind: 'pool', pool }, 5000, false);
    const call = executor.run(['SELECT 1'], 'e');
    await new Promise((r) => setImmediate(r));
    handOut();
    await expect(call).resolves.toEqual([[]]);
    expect(state.queries).toBe(1);
  });
});
