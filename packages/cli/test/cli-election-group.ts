import { waitFor } from '@conclave/test-harness';
import { assertBuilt, killAll, runConclave, startConclave, uniqueElection, type ConclaveProcess } from './cli-process';

/**
 * campaign / status / force / clear / watch, end to end on one real backend, through the built
 * binary. Each backend's test file calls this with its URL (a function, for servers started in
 * beforeAll).
 */
export function describeCliElection(name: string, url: () => string, options: { listsCandidates: boolean }): void {
  describe(`conclave on ${name}`, () => {
    const lease = ['--lease-ms', '1500'];
    /**
     * Where no lease is waited out (a hand-over by release, a status read): long enough that a
     * process starved of the CPU for seconds on a loaded machine still renews in time (with
     * 1.5 s, a starved leader lost its term to the other candidate mid-test).
     */
    const heldLease = ['--lease-ms', '10000'];
    /** A take-over after a release comes within half of `heldLease`: not by the lease's end. */
    const afterReleaseMs = 5000;
    const campaignWith = (leaseFlags: string[]) => (election: string, id: string, ...extra: string[]) =>
      startConclave(['campaign', '--json', '--backend', url(), '--election', election, '--id', id, ...leaseFlags, ...extra]);
    const campaign = campaignWith(heldLease);

    beforeAll(assertBuilt);
    afterEach(killAll);

    test('hand-over: the leader gets SIGTERM, steps down, exits 0, and the other campaign reports elected', async () => {
      const election = uniqueElection('handover');
      const a = campaign(election, 'cand-a');
      const elected = await a.waitForEvent({ event: 'elected' });
      expect(elected).toMatchObject({ election, id: 'cand-a', leaderId: 'cand-a', reason: 'acquired' });
      expect(typeof elected.token).toBe('number');

      const b = campaign(election, 'cand-b');
      await b.waitForEvent({ event: 'leader', leaderId: 'cand-a' });
      expect(b.events().some((e) => e.event === 'elected')).toBe(false);

      a.signal('SIGTERM');
      const bElected = await b.waitForEvent({ event: 'elected' }, afterReleaseMs);
      expect(bElected).toMatchObject({ election, id: 'cand-b', leaderId: 'cand-b' });
      expect(bElected.token as number).toBeGreaterThan(elected.token as number);

      expect(await a.waitForExit()).toEqual({ code: 0, signal: null });
      expect(a.events().map((e) => e.event).slice(-2)).toEqual(['revoked', 'stopped']);
      expect(a.events().at(-2)).toMatchObject({ reason: 'stopped', token: elected.token });
      expect(a.events().at(-1)).toMatchObject({ event: 'stopped', reason: 'SIGTERM', leaderId: null, token: null });
      for (const e of [...a.events(), ...b.events()]) {
        expect(Object.keys(e).filter((k) => k !== 'at').sort()).toEqual(['election', 'event', 'id', 'leaderId', 'reason', 'token']);
      }

      b.signal('SIGINT');
      expect(await b.waitForExit()).toEqual({ code: 0, signal: null });
      expect(b.events().at(-1)).toMatchObject({ event: 'stopped', reason: 'SIGINT' });
    });

    test('status names the leader, its token, the value it published and since when it leads (text and --json)', async () => {
      const election = uniqueElection('status');
      const a = campaign(election, 'cand-a', '--value', 'http://host-a:8080/ü');
      const elected = await a.waitForEvent({ event: 'elected' });
      const b = campaign(election, 'cand-b');
      await b.waitForEvent({ event: 'leader', leaderId: 'cand-a' });

      const text = await runConclave(['status', '--backend', url(), '--election', election]);
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(/^leader: +cand-a$/m);
      expect(text.stdout).toContain(`token:      ${elected.token}`);
      // Every backend here keeps the value and the term's start.
      expect(text.stdout).toMatch(/^value: +"http:\/\/host-a:8080\/ü"$/m);
      expect(text.stdout).toMatch(/^since: +\d{4}-\d\d-\d\dT[\d:.]+Z \((\d+ ms ago|in \d+ ms)\)$/m);

      const json = await runConclave(['status', '--json', '--backend', url(), '--election', election]);
      expect(json.code).toBe(0);
      const status = JSON.parse(json.stdout) as Record<string, unknown>;
      expect(status).toMatchObject({ election, leaderId: 'cand-a', token: elected.token, value: 'http://host-a:8080/ü' });
      expect(typeof status.since).toBe('number');
      // The rest is there, a number where the backend keeps it, else null.
      for (const key of ['renewedAt', 'leaseEndsAt', 'transitions']) expect(status[key] === null || typeof status[key] === 'number').toBe(true);
      if (typeof status.leaseEndsAt === 'number') expect(status.leaseEndsAt).toBeGreaterThan(status.since as number);
      if (options.listsCandidates) {
        expect(status.candidates).toEqual(expect.arrayContaining(['cand-a', 'cand-b']));
        expect((status.candidates as string[])[0]).toBe('cand-a');
      } else {
        expect(status.candidates).toBeNull();
      }
    });

    test('force makes another candidate leader; clear starts a new election with a greater token', async () => {
      const election = uniqueElection('admin');
      // Short leases: a forced or cleared term ends at its holder's next renewal, and the next
      // is granted once the revoked lease has ended.
      const a = campaignWith(lease)(election, 'cand-a');
      const first = await a.waitForEvent({ event: 'elected' });
      const b = campaignWith(lease)(election, 'cand-b');
      await b.waitForEvent({ event: 'leader', leaderId: 'cand-a' });

      const forced = await runConclave(['force', '--backend', url(), '--election', election, '--leader', 'cand-b', '--lease-ms', '1500']);
      // A candidate: nothing to warn of, unless the backend cannot list candidates to check it.
      expect(forced.stderr).toBe(options.listsCandidates ? '' : `conclave: ${name} cannot list candidates: whether "cand-b" is one could not be checked\n`);
      expect(forced.code).toBe(0);
      expect(forced.stdout).toMatch(/led by cand-b \(token \d+\)/);
      const forcedToken = Number(/token (\d+)/.exec(forced.stdout)![1]);
      expect(forcedToken).toBeGreaterThan(first.token as number);

      await a.waitForEvent({ event: 'revoked', reason: 'lease-lost' });
      await b.waitForEvent({ event: 'elected' });
      const status = await runConclave(['status', '--json', '--backend', url(), '--election', election]);
      expect(JSON.parse(status.stdout)).toMatchObject({ leaderId: 'cand-b', token: forcedToken });

      const cleared = await runConclave(['clear', '--backend', url(), '--election', election]);
      expect(cleared.code).toBe(0);
      expect(cleared.stdout).toMatch(/cleared/);
      // Someone is elected again (whoever campaigns first), with a greater token.
      const next = await waitFor(
        () =>
          [...a.events(), ...b.events()].find((e) => e.event === 'elected' && (e.token as number) > forcedToken),
        'an election after clear',
        20_000,
      );
      const after = await runConclave(['status', '--json', '--backend', url(), '--election', election]);
      const seen = JSON.parse(after.stdout) as { leaderId: string; token: number };
      expect(seen.token).toBeGreaterThanOrEqual(next.token as number);
    });

    test('watch prints each change of leader and exits 0 on SIGINT', async () => {
      const election = uniqueElection('watch');
      const watch = startConclave(['watch', '--json', '--interval-ms', '100', '--backend', url(), '--election', election]);
      await watch.waitForEvent({ event: 'leader', leaderId: null });
      const a: ConclaveProcess = campaign(election, 'cand-a');
      const elected = await a.waitForEvent({ event: 'elected' });
      await watch.waitForEvent({ event: 'leader', leaderId: 'cand-a', token: elected.token });
      a.signal('SIGTERM');
      await a.waitForExit();
      await waitFor(() => watch.events().filter((e) => e.leaderId === null).length >= 2, 'watch to see the release');
      watch.signal('SIGINT');
      expect(await watch.waitForExit()).toEqual({ code: 0, signal: null });
      expect(watch.stderr).toBe('');
    });
  });
}
