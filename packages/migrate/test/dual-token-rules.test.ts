import { MemoryBackend, MemoryStore, type MemoryBackendOptions } from '@conclave/core';
import type { ElectionBackend } from '@conclave/core/spi';
import { MigratingBackend } from '@conclave/migrate';

// The dual token rules, call by call, on in-memory backends. `from` is a memory backend that
// cannot raise its token floor (a backend without a `tokenFloor` part): a token a dual term puts
// above `from`'s sequence is never caught up with by the old candidates.

/** A memory backend without the `tokenFloor` part (nor `leaderChanges`). */
class NoFloorBackend extends MemoryBackend {
  constructor(options: MemoryBackendOptions) {
    super(options);
    Object.defineProperties(this, { tokenFloor: { value: undefined }, leaderChanges: { value: undefined } });
  }
}

const LEASE = 60_000;
const election = 'rules';
let from: MemoryBackend;
let to: MemoryBackend;
let dual: MigratingBackend;
beforeEach(() => {
  from = new NoFloorBackend({ store: new MemoryStore() });
  to = new MemoryBackend({ store: new MemoryStore() });
  dual = new MigratingBackend({ from, to, phase: 'dual', closeBackends: false });
});
afterEach(async () => {
  await Promise.all([dual.close(), from.close(), to.close()]);
});

/** A lease short enough to wait out when an admin revoked it (clear/force wait for its end). */
const SHORT_LEASE = 300;
const campaign = (backend: ElectionBackend, candidateId: string, leaseMs = LEASE) => backend.campaign({ election, candidateId, leaseMs });
const tokenOf = async (backend: ElectionBackend, candidateId: string, leaseMs = LEASE): Promise<number> => {
  const result = await campaign(backend, candidateId, leaseMs);
  if (result.role !== 'leader') throw new Error(`${candidateId} did not lead: ${JSON.stringify(result)}`);
  return result.token;
};

test('a dual leader that loses only to gives from back at once, and the next old leader gets a greater token', async () => {
  const dualToken = await tokenOf(dual, 'dual-1');
  await to.admin!.clearLeader(election);
  expect(await dual.renew({ election, candidateId: 'dual-1', token: dualToken, leaseMs: LEASE })).toEqual({ held: false, leaderId: null });
  // from was given back: an old candidate leads at once, above the dual term.
  expect(await tokenOf(from, 'old-2')).toBeGreaterThan(dualToken);
});

test('a to term that ended under a from term that went on is not retaken with to\'s next token', async () => {
  const first = await tokenOf(dual, 'dual-1', SHORT_LEASE);
  // to's term ends (expiry during a blip, an admin clear) while the dual candidate keeps from;
  // it campaigns again before any renewal told it. A clear keeps everyone out of to until the
  // revoked lease has ended: meanwhile the dual candidate follows (and gives from back).
  await to.admin!.clearLeader(election);
  expect(await campaign(dual, 'dual-1', SHORT_LEASE)).toMatchObject({ role: 'follower', leaderId: null });
  await new Promise((r) => setTimeout(r, SHORT_LEASE + 20));
  const second = await campaign(dual, 'dual-1');
  expect(second.role).toBe('leader');
  const secondToken = second.role === 'leader' ? second.token : 0;
  expect(secondToken).toBeGreaterThan(first);
  // It started a fresh from term: from's own token is now at least the dual one, so the next old
  // leader gets a greater token still.
  await dual.release({ election, candidateId: 'dual-1', token: secondToken });
  expect(await tokenOf(from, 'old-2')).toBeGreaterThan(secondToken);
});

test('a from term that changed under a recorded dual term raises to\'s floor again', async () => {
  const first = await tokenOf(dual, 'dual-1', SHORT_LEASE);
  // from alone moves on: cleared, an old candidate leads (once the revoked lease has ended) and
  // leaves, while the dual candidate's term is still recorded (its renewal has not run).
  await from.admin!.clearLeader(election);
  await new Promise((r) => setTimeout(r, SHORT_LEASE + 20));
  const oldToken = await tokenOf(from, 'old-2');
  await from.release({ election, candidateId: 'old-2', token: oldToken });
  const again = await tokenOf(dual, 'dual-1');
  expect(oldToken).toBeGreaterThan(first);
  expect(again).toBeGreaterThan(oldToken);
});

test('a dual candidate that cannot reach to gives from back, and release gives both back when to throws', async () => {
  const failing = Object.assign(Object.create(to) as MemoryBackend, {
    campaign: () => Promise.reject(new Error('to is down')),
    release: () => Promise.reject(new Error('to is down')),
  });
  const broken = new MigratingBackend({ from, to: failing, phase: 'dual', closeBackends: false });
  await expect(campaign(broken, 'dual-1')).rejects.toThrow('to is down');
  expect(await from.getLeader(election)).toBeNull();
  // A leader whose to fails at release still gives from back.
  const token = await tokenOf(dual, 'dual-3');
  const half = new MigratingBackend({ from, to: failing, phase: 'dual', closeBackends: false });
  (half as unknown as { dual: { terms: Map<string, unknown> } }).dual.terms.set(`${election}\u0000dual-3`, { fromToken: token, toToken: token });
  await expect(half.release({ election, candidateId: 'dual-3', token })).rejects.toThrow('to is down');
  expect(await from.getLeader(election)).toBeNull();
});

test('clearLeader clears from even when to throws, and reports to\'s error', async () => {
  const failing = Object.assign(Object.create(to) as MemoryBackend, {
    admin: { ...to.admin, clearLeader: () => Promise.reject(new Error('to is down')) },
  });
  const broken = new MigratingBackend({ from, to: failing, phase: 'dual', closeBackends: false });
  await tokenOf(from, 'old-1');
  await expect(broken.admin!.clearLeader(election)).rejects.toThrow('to is down');
  expect(await from.getLeader(election)).toBeNull();
});
