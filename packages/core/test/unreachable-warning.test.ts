import { ConclaveError, Elector, MemoryBackend, silentLogger, type ElectorOptions } from '@conclave/core';
import { delay, waitFor } from '@conclave/test-harness';

/** A memory backend that can refuse every call with a message that quotes a password. */
class RefusingBackend extends MemoryBackend {
  refusing = false;
  private check() {
    if (this.refusing) {
      throw new ConclaveError('BACKEND_UNAVAILABLE', 'connect to redis://:hunter2@10.0.0.9:6379 refused', { backend: 'memory' });
    }
  }
  override async campaign(...args: Parameters<MemoryBackend['campaign']>) {
    this.check();
    return super.campaign(...args);
  }
  override async renew(...args: Parameters<MemoryBackend['renew']>) {
    this.check();
    return super.renew(...args);
  }
  override async release(...args: Parameters<MemoryBackend['release']>) {
    this.check();
    return super.release(...args);
  }
}

let lines: string[] = [];
let stops: Array<() => Promise<void>> = [];
const savedLog = process.env.CONCLAVE_LOG;
beforeEach(() => {
  delete process.env.CONCLAVE_LOG;
  lines = [];
  const write = process.stderr.write.bind(process.stderr) as (chunk: string | Uint8Array) => boolean;
  jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    if (String(chunk).startsWith('conclave')) {
      lines.push(String(chunk));
      return true;
    }
    return write(chunk);
  });
});
afterEach(async () => {
  for (const stop of stops) await stop();
  stops = [];
  jest.restoreAllMocks();
  if (savedLog === undefined) delete process.env.CONCLAVE_LOG;
  else process.env.CONCLAVE_LOG = savedLog;
});

/**
 * The lease of a test that waits for the backend to answer again: the candidates then lead, and a
 * stall of the test's process longer than what is left of a lease (a loaded machine) would end a
 * term, which is an outage too (`lost`), and a line. A second of lease leaves most of it.
 */
const RECOVERING_LEASE_MS = 1000;

/**
 * Answered since the outage: `connected` (the first answer since start) or, if a stall of this
 * process made a renewal late in the meantime, `reconnected`.
 */
function answered(e: Elector): boolean {
  return e.backendState === 'connected' || e.backendState === 'reconnected';
}

function elector(backend: MemoryBackend, extra: Partial<ElectorOptions> = {}, election = 'nightly-report') {
  const e = new Elector({ backend, election, leaseMs: 200, ...extra });
  stops.push(() => e.stop());
  return e;
}

describe('default warning when no logger is given', () => {
  test('writes one line naming the election and backend kind, without the password, when lost, and one when back', async () => {
    const backend = new RefusingBackend();
    backend.refusing = true;
    const e = elector(backend, { leaseMs: RECOVERING_LEASE_MS });
    await e.start();
    await waitFor(() => e.backendState === 'lost', 'lost');
    // More failures after lost add nothing.
    await delay(250);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^conclave warn: the memory backend of election "nightly-report" has not answered for more than a lease/);
    expect(lines[0]).toContain('10.0.0.9');
    expect(lines[0]).not.toContain('hunter2');
    backend.refusing = false;
    await waitFor(() => answered(e), 'an answer');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toBe('conclave info: the memory backend of election "nightly-report" answers again.\n');
  });

  test('writes nothing for failures shorter than a lease', async () => {
    const backend = new RefusingBackend();
    const e = elector(backend, { leaseMs: 2000 });
    await e.start();
    backend.refusing = true;
    await waitFor(() => e.backendState === 'suspended', 'suspended');
    backend.refusing = false;
    await waitFor(() => e.backendState === 'reconnected', 'reconnected');
    expect(lines).toEqual([]);
  });

  test('says one line for an outage of one backend shared by many elections', async () => {
    const backend = new RefusingBackend();
    backend.refusing = true;
    const electors = ['a', 'b', 'c'].map((name) => elector(backend, { leaseMs: RECOVERING_LEASE_MS }, name));
    await Promise.all(electors.map((e) => e.start()));
    await waitFor(() => electors.every((e) => e.backendState === 'lost'), 'all lost');
    expect(lines).toHaveLength(1);
    backend.refusing = false;
    await waitFor(() => electors.every(answered), 'all back');
    expect(lines).toHaveLength(2);
  });

  test('logger: null silences it, and so does a logger of one’s own', async () => {
    const backend = new RefusingBackend();
    backend.refusing = true;
    const silent = elector(backend, { logger: null }, 'silent');
    const own = elector(backend, { logger: silentLogger }, 'own');
    await Promise.all([silent.start(), own.start()]);
    await waitFor(() => silent.backendState === 'lost' && own.backendState === 'lost', 'lost');
    expect(lines).toEqual([]);
  });
});

describe('no warning for what is not an outage', () => {
  test('a backend its owner closed under a leader, and refusals that are answers (MIGRATION_CONFLICT), write nothing', async () => {
    const closing = new MemoryBackend();
    const leader = elector(closing, {}, 'closed-under-leader');
    await leader.start();
    await waitFor(() => leader.isLeader(), 'the leader');
    await closing.close();
    await waitFor(() => !leader.isLeader(), 'the lease to run out');
    await delay(400); // two leases of failed renewals and campaigns

    class ConflictBackend extends MemoryBackend {
      override async campaign(): ReturnType<MemoryBackend['campaign']> {
        throw new ConclaveError('MIGRATION_CONFLICT', 'an old node leads', { backend: 'memory' });
      }
    }
    const refused = elector(new ConflictBackend(), {}, 'refused-by-conflict');
    await refused.start();
    await delay(600); // three leases of refusals
    expect(refused.backendState).not.toBe('lost');
    expect(lines).toEqual([]);
  });
});
