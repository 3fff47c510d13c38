import { describe, expect, test } from '@jest/globals';
import type { ElectionBackend, LeaderInfo } from '@conclave/core/spi';
import type { BackendProfile } from './backend-profile';
import { delay, waitFor } from '../wait-for';
import type { SuiteContext } from './suite-context';

/** Lease of this group's Electors, ms: short, so force and clear (which wait out a lease) are quick. */
const LEASE_MS = 800;
/** A hint must come within this of the change, ms. */
const HINT_MS = 5_000;

/**
 * Follows `election` through `watchLeader` and reads `getLeader` only when a hint came, so a
 * change is seen only if a hint announced it.
 */
class Observer {
  private hints = 0;
  /** Hints up to this one were followed by a read; later ones are still to be answered. */
  private answered = 0;
  private waiting: (() => void) | null = null;
  readonly unsubscribe: () => void;

  constructor(
    private readonly backend: ElectionBackend,
    private readonly election: string,
  ) {
    this.unsubscribe = backend.leaderChanges!.watch(election, () => {
      this.hints++;
      this.waiting?.();
    });
  }

  get count(): number {
    return this.hints;
  }

  /** Waits for hints until a read made after one satisfies `seen`; fails after HINT_MS. */
  async until(seen: (leader: LeaderInfo | null) => boolean, what: string): Promise<LeaderInfo | null> {
    const deadline = performance.now() + HINT_MS;
    let last: LeaderInfo | null | undefined;
    for (;;) {
      if (this.hints > this.answered) {
        this.answered = this.hints;
        last = await this.backend.getLeader(this.election);
        if (seen(last)) return last;
        continue;
      }
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`no hint announced ${what} within ${HINT_MS} ms (last read after a hint: ${JSON.stringify(last)})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiting = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.waiting = null;
    }
  }
}

/** `leaderChanges`, where the backend has the part: which changes it announces. */
export function describeWatchLeader(ctx: () => SuiteContext, profile: BackendProfile): void {
  const push = profile.leaderChanges;
  describe('watchLeader (an observer following the leader)', () => {
    const pushTest = push !== 'none' ? test : test.skip;
    pushTest(
      push !== 'none'
        ? 'hints once subscribed, then at a new term, a force, a clear and a release; none after unsubscribing'
        : 'skipped: the backend has no leaderChanges part (observers poll getLeader)',
      async () => {
        const c = ctx();
        const election = c.election('observe');
        const admin = await c.backend();
        const observer = new Observer(admin, election);
        expect(await observer.until(() => true, 'the subscription in place')).toBeNull();

        const a = await c.elector(election, 'a', { leaseMs: LEASE_MS, retryMs: LEASE_MS / 5 });
        await a.start();
        await waitFor(() => a.isLeader(), 'a to lead');
        const first = await observer.until((l) => l?.candidateId === 'a', 'the new term');
        expect(first!.token).toBe(a.token);

        const b = await c.elector(election, 'b', { leaseMs: LEASE_MS, retryMs: LEASE_MS / 5 });
        await b.start();
        await waitFor(() => b.state.leaderId === 'a', 'b to see a lead');
        const forced = await admin.admin!.forceLeader(election, 'b', LEASE_MS);
        await observer.until((l) => l?.candidateId === 'b' && l.token === forced.token, 'the force');

        await admin.admin!.clearLeader(election);
        await observer.until((l) => l === null || l.token > forced.token, 'the clear');
        // Whoever leads next, once the cleared lease could have ended.
        const next = await waitFor(() => [a, b].find((e) => e.isLeader() && e.token! > forced.token), 'a term after the clear', LEASE_MS * 10);
        await observer.until((l) => l?.token === next.token, 'the term after the clear');

        const other = next === a ? b : a;
        await other.stop();
        await next.stop();
        await observer.until((l) => l === null, 'the release');

        observer.unsubscribe();
        const after = observer.count;
        const again = await c.elector(election, 'c', { leaseMs: LEASE_MS, retryMs: LEASE_MS / 5 });
        await again.start();
        await waitFor(() => again.isLeader(), 'c to lead');
        await delay(300);
        expect(observer.count).toBe(after);
      },
    );
  });
}
