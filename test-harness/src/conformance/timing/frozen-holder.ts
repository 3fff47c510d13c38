import { performance } from 'node:perf_hooks';
import type { ControlledBackend } from '../../controlled-backend';
import { waitFor } from '../../wait-for';
import type { SuiteContext } from '../suite-context';
import { grantOf } from './lease-grants';

/**
 * `a` leads, then freezes the moment a renewal is granted, so that lease runs its full length
 * on the server. Resolves once every call `a` sent has been answered, with when the server's
 * lease ends at the earliest: the send of `a`'s last granted call plus the grant.
 */
export async function leadThenFreezeAtGrantedRenewal(c: SuiteContext, election: string) {
  const aBackend = await c.backend();
  const a = await c.elector(election, 'a', { backend: aBackend });
  await a.start();
  await waitFor(() => a.isLeader(), 'a to lead', c.leaseMs * 10);
  const aToken = a.token!;
  aBackend.hangAfter((call) => call.method === 'renew' && grantOf({ ...call, result: call.answer }) !== null);
  await waitFor(() => aBackend.isHanging, 'a granted renewal', c.leaseMs * 10);
  await c.freeze(aBackend);
  await waitFor(
    () => aBackend.calls.every((call) => !call.reachedServer || call.deliveredAt !== undefined),
    'the calls a sent before the freeze to be answered',
    c.leaseMs * 10,
  );
  let leaseEnd = -Infinity;
  for (const call of aBackend.calls) {
    const granted = grantOf(call);
    if (granted !== null) leaseEnd = Math.max(leaseEnd, call.sentAt + granted);
  }
  return { aToken, leaseEnd };
}

/** `b` campaigns without pause until it wins: when it won, with which token, and its last refusal. */
export async function campaignUntilWon(c: SuiteContext, b: ControlledBackend, election: string) {
  let won: { repliedAt: number; token: number } | null = null;
  let lastRefusalAt = -Infinity;
  const giveUpAt = performance.now() + c.leaseMs * 20 + 30_000;
  while (!won) {
    const result = await b.campaign({ election, candidateId: 'b', leaseMs: c.leaseMs });
    const repliedAt = performance.now();
    if (result.role === 'leader') won = { repliedAt, token: result.token };
    else {
      lastRefusalAt = repliedAt;
      if (repliedAt > giveUpAt) throw new Error('b never got the lease');
      await new Promise((r) => setImmediate(r));
    }
  }
  return { won, lastRefusalAt };
}
