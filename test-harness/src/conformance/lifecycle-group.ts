import { describe, expect, test } from '@jest/globals';
import type { LeadershipState } from '@conclave/core';
import { waitFor } from '../wait-for';
import type { SuiteContext } from './suite-context';

/** start/stop/stepDown/pause/resume, the streams they drive, and whileLeader. */
export function describeLifecycle(ctx: () => SuiteContext): void {
  describe('lifecycle and streams', () => {
    test('stop() releases at once and is idempotent', async () => {
      const c = ctx();
      const election = c.election('stop');
      const a = await c.elector(election, 'a');
      await a.start();
      await waitFor(() => a.isLeader(), 'a to lead');
      const admin = await c.backend();
      await Promise.all([a.stop(), a.stop()]);
      await a.stop();
      expect(a.isLeader()).toBe(false);
      expect(a.state).toEqual({ role: 'stopped', leaderId: null, token: null });
      // Released, not left to expire: nobody leads right after stop() resolved.
      expect(await admin.getLeader(election)).toBeNull();
    });

    test('a stopped Elector can start again and leads with a greater token', async () => {
      const c = ctx();
      const election = c.election('restart');
      const a = await c.elector(election, 'a');
      await a.start();
      await waitFor(() => a.isLeader(), 'a to lead');
      const first = a.token!;
      await a.stop();
      await a.start();
      await waitFor(() => a.isLeader(), 'a to lead again');
      expect(a.token!).toBeGreaterThan(first);
    });

    test('pause() makes the leader step down and stop campaigning; resume() campaigns again', async () => {
      const c = ctx();
      const election = c.election('pause');
      const a = await c.elector(election, 'a');
      const b = await c.elector(election, 'b');
      await a.start();
      await waitFor(() => a.isLeader(), 'a to lead');
      await b.start();
      a.pause();
      expect(a.isLeader()).toBe(false);
      expect(a.state.role).toBe('paused');
      await waitFor(() => b.isLeader(), 'b to take over');
      await b.stop();
      // a is paused: it must not take the free lease.
      await new Promise((r) => setTimeout(r, c.leaseMs));
      expect(a.isLeader()).toBe(false);
      expect(a.state.role).toBe('paused');
      a.resume();
      await waitFor(() => a.isLeader(), 'a to lead after resume', c.leaseMs * 10);
    });

    test('stepDown() hands over and keeps campaigning', async () => {
      const c = ctx();
      const election = c.election('stepdown');
      const a = await c.elector(election, 'a');
      const b = await c.elector(election, 'b');
      await a.start();
      await waitFor(() => a.isLeader(), 'a to lead');
      await b.start();
      await a.stepDown();
      expect(a.isLeader()).toBe(false);
      expect(a.state.role).toBe('follower');
      await waitFor(() => b.isLeader(), 'b to take over');
      await b.stop();
      await waitFor(() => a.isLeader(), 'a to lead again', c.leaseMs * 10);
    });

    test('state$, isLeader$ and leader$ replay the current value and never repeat one', async () => {
      const c = ctx();
      const election = c.election('streams');
      const a = await c.elector(election, 'a');
      const states: LeadershipState[] = [];
      const leading: boolean[] = [];
      const leaderIds: Array<string | null> = [];
      a.state$.subscribe((s) => states.push(s));
      a.isLeader$.subscribe((v) => leading.push(v));
      a.leader$.subscribe((v) => leaderIds.push(v));
      expect(states).toEqual([{ role: 'stopped', leaderId: null, token: null }]);
      await a.start();
      await waitFor(() => a.isLeader(), 'a to lead');
      const token = a.token!;
      await a.stepDown();
      await a.stop();
      expect(states[0]).toEqual({ role: 'stopped', leaderId: null, token: null });
      expect(states).toContainEqual({ role: 'leader', leaderId: 'a', token });
      expect(states).toContainEqual({ role: 'follower', leaderId: null, token: null, reason: 'stepped-down' });
      expect(states[states.length - 1]).toEqual({ role: 'stopped', leaderId: null, token: null });
      for (let i = 1; i < states.length; i++) expect(states[i]).not.toEqual(states[i - 1]);
      expect(leading.slice(0, 3)).toEqual([false, true, false]);
      for (let i = 1; i < leading.length; i++) expect(leading[i]).not.toBe(leading[i - 1]);
      for (let i = 1; i < leaderIds.length; i++) expect(leaderIds[i]).not.toBe(leaderIds[i - 1]);
      expect(leaderIds).toContain('a');
      // A late subscriber gets the current value at once.
      let replayed: LeadershipState | undefined;
      a.state$.subscribe((s) => (replayed = s)).unsubscribe();
      expect(replayed).toEqual(a.state);
    });

    test('elected$ and revoked$ carry the token and the reason', async () => {
      const c = ctx();
      const election = c.election('events');
      const a = await c.elector(election, 'a');
      const events: string[] = [];
      a.elected$.subscribe((e) => events.push(`elected ${e.token} ${e.reason}`));
      a.revoked$.subscribe((e) => events.push(`revoked ${e.token} ${e.reason}`));
      await a.start();
      await waitFor(() => a.isLeader(), 'a to lead');
      const t1 = a.token!;
      await a.stepDown();
      await waitFor(() => a.isLeader(), 'a to lead again', c.leaseMs * 10);
      const t2 = a.token!;
      await a.stop();
      expect(events).toEqual([
        `elected ${t1} acquired`,
        `revoked ${t1} stepped-down`,
        `elected ${t2} acquired`,
        `revoked ${t2} stopped`,
      ]);
      expect(t2).toBeGreaterThan(t1);
    });

    test('whileLeader runs a task per term and aborts its signal when the term ends', async () => {
      const c = ctx();
      const election = c.election('task');
      const a = await c.elector(election, 'a');
      const seen: Array<{ token: number; aborted: boolean; leadingAtAbort: boolean }> = [];
      const unregister = a.whileLeader(
        ({ token, signal }) =>
          new Promise<void>((resolve) => {
            const entry = { token, aborted: false, leadingAtAbort: true };
            seen.push(entry);
            signal.addEventListener('abort', () => {
              entry.aborted = true;
              entry.leadingAtAbort = a.isLeader();
              resolve();
            });
          }),
      );
      await a.start();
      await waitFor(() => seen.length === 1, 'the task to start');
      expect(seen[0]!.token).toBe(a.token);
      await a.stepDown();
      expect(seen[0]!.aborted).toBe(true);
      expect(seen[0]!.leadingAtAbort).toBe(false);
      await waitFor(() => seen.length === 2, 'the task to start for the next term', c.leaseMs * 10);
      expect(seen[1]!.token).toBeGreaterThan(seen[0]!.token);
      unregister();
      await a.stop();
      expect(seen[1]!.aborted).toBe(true);
    });
  });
}
