import { afterAll, describe, expect, test } from '@jest/globals';
import { performance } from 'node:perf_hooks';
import { Elector } from '@conclave/core';
import { EtcdBackend } from '@conclave/etcd';
import { eventually, privateEtcd, sleep } from './etcd-test-env';

// The fencing token is the leader key's create revision (plus the token floor's offset): etcd's
// revision is cluster-wide, kept on disk and never reused, so every new term has a higher token
// than every term before it — across a member crash and restart, and across forceLeader and
// clearLeader, which start new terms on keys that already exist.

const etcd = privateEtcd();
const LEASE_MS = 2000;

describe('etcd fencing tokens', () => {
  const cleanup: Array<() => Promise<void> | void> = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c();
  });

  test('every new term has a higher token than the one before: across member kill/restart ×2, forceLeader and clearLeader', async () => {
    const election = `token-order-${process.pid}`;
    const terms: Array<{ atMs: number; id: string; token: number; step: string }> = [];
    let step = 'start';
    const electors = new Map<string, Elector>();
    for (const id of ['a', 'b', 'c']) {
      const backend = new EtcdBackend({ hosts: etcd.hosts, requestTimeoutMs: 2_000 });
      cleanup.push(() => backend.close());
      const elector = new Elector({ backend, election, candidateId: id, leaseMs: LEASE_MS, logger: null });
      cleanup.push(() => elector.stop());
      elector.elected$.subscribe(({ token }) => terms.push({ atMs: performance.now(), id, token, step }));
      electors.set(id, elector);
    }
    const admin = new EtcdBackend({ hosts: etcd.hosts, requestTimeoutMs: 2_000 });
    cleanup.push(() => admin.close());
    const leaderId = () => [...electors].find(([, e]) => e.isLeader())?.[0] ?? null;
    const aLeader = async (what: string) => {
      await eventually(() => leaderId() !== null, `a leader ${what}`, 20_000);
      return leaderId()!;
    };

    await Promise.all([...electors.values()].map((e) => e.start()));
    await aLeader('at start');

    for (const round of [1, 2]) {
      step = `restart ${round}`;
      const before = terms.length;
      // The member crashes while a candidate leads; the key and its lease survive the restart.
      await etcd.cluster.members[0]!.kill();
      await sleep(LEASE_MS + 500);
      await etcd.cluster.members[0]!.restart();
      await aLeader(`after restart ${round}`);
      // Force a change of leader after the restart, so a new term must follow the old ones.
      // forceLeader promotes a candidate whose key exists: one the restart did not leave between
      // campaigns (a leader that lost its term during the outage released it).
      const current = leaderId()!;
      const next = await eventually(async () => {
        const campaigning = await admin.candidates!.list(election).catch(() => [] as string[]);
        return campaigning.find((id) => id !== current);
      }, 'a follower campaigning', 20_000);
      step = `force ${next} after restart ${round}`;
      const forced = await admin.admin!.forceLeader(election, next);
      expect(forced.candidateId).toBe(next);
      await eventually(() => electors.get(next)!.isLeader(), `${next} to lead after the force`, 20_000);
      expect(electors.get(next)!.token).toBe(forced.token);
      expect(terms.length).toBeGreaterThan(before);
    }

    step = 'clear';
    const clearedToken = electors.get(leaderId()!)!.token!;
    await admin.admin!.clearLeader(election);
    await eventually(() => terms.some((t) => t.step === 'clear' && t.token > clearedToken), 'a new term after the clear', 20_000);
    expect((await admin.getLeader(election))?.token).toBeGreaterThan(clearedToken);

    // Terms in the order they began: a new leader's token is above every token before it; a
    // candidate that kept its key across an outage may be re-elected with the same token, never a lower one.
    terms.sort((x, y) => x.atMs - y.atMs);
    const problems: string[] = [];
    for (let i = 1; i < terms.length; i++) {
      const prev = terms[i - 1]!;
      const t = terms[i]!;
      const highest = Math.max(...terms.slice(0, i).map((x) => x.token));
      if (t.id !== prev.id ? t.token <= highest : t.token < prev.token) {
        problems.push(`${t.id} token ${t.token} (${t.step}) after ${prev.id} token ${prev.token} (${prev.step}), highest before ${highest}`);
      }
    }
    expect({ terms: terms.map((t) => `${t.id}:${t.token}@${t.step}`), problems }).toEqual({ terms: terms.map((t) => `${t.id}:${t.token}@${t.step}`), problems: [] });
    // The forced and cleared terms really are new terms with higher tokens.
    expect(new Set(terms.map((t) => t.step)).size).toBeGreaterThanOrEqual(4);
  }, 90_000);
});
