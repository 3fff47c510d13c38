import { expect, test } from '@jest/globals';
import { performance } from 'node:perf_hooks';
import { eventually, privateEtcd } from './etcd-test-env';

// A call in flight when its member stops answering (a Raft leader gone, a link blackholed) waits
// for its gRPC deadline. The core tells each call when it gives up on it (`deadlineMs`): the call
// must end then, not at the backend's requestTimeoutMs, or the candidate's next call waits behind
// it (one call at a time per candidate) and the election stays leaderless for that long.

const etcd = privateEtcd();
const GIVE_UP_MS = 300;

test('a call the core gives up on ends by its deadlineMs, and the next call is not held behind it', async () => {
  // requestTimeoutMs is 2 000 ms on the proxied backend.
  const backend = await etcd.proxied();
  const election = `deadline-${Date.now()}`;
  try {
    const first = await backend.campaign({ election, candidateId: 'a', leaseMs: 2000 });
    expect(first.role).toBe('leader');
    etcd.proxyOf(backend).blackhole();
    const sentAt = performance.now();
    const renewal = await backend
      .renew({ election, candidateId: 'a', token: (first as { token: number }).token, leaseMs: 2000, deadlineMs: sentAt + GIVE_UP_MS })
      .then(
        () => 'answered',
        (err: { code?: string }) => err.code,
      );
    const renewMs = performance.now() - sentAt;
    const campaignSentAt = performance.now();
    const campaign = await backend.campaign({ election, candidateId: 'a', leaseMs: 2000, deadlineMs: campaignSentAt + GIVE_UP_MS }).then(
      () => 'answered',
      (err: { code?: string }) => err.code,
    );
    const campaignMs = performance.now() - campaignSentAt;
    // Well under the 2 s request timeout: ended by the deadline the core gave.
    expect({ renewal, campaign, endedByTheDeadline: renewMs < 1000 && campaignMs < 1000 }).toEqual({
      renewal: 'BACKEND_UNAVAILABLE',
      campaign: 'BACKEND_UNAVAILABLE',
      endedByTheDeadline: true,
    });
    etcd.proxyOf(backend).resume();
    // Once the link is back, the candidate's calls go through again.
    await eventually(async () => (await backend.campaign({ election, candidateId: 'a', leaseMs: 2000 }).catch(() => null))?.role === 'leader', 'the campaign to lead again', 15_000);
  } finally {
    await backend.close();
  }
});
