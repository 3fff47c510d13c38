import { assessMigration, type SideReading } from '../src/migration-assessment';

/** The decision of `conclave migrate status`, over every combination of facts (no server). */

const lead = (candidateId: string, token: number) => ({ candidateId, token });
const side = (leader: { candidateId: string; token: number } | null, candidates: string[] | null): SideReading => ({
  ok: true,
  leader,
  candidates,
});
const down = (code = 'BACKEND_UNAVAILABLE'): SideReading => ({ ok: false, code });

describe('assessMigration: the cases named in the guide', () => {
  test('the same candidate leading both sides makes to-only safe, naming both tokens', () => {
    const a = assessMigration(side(lead('dual-1', 41), ['dual-1', 'old-1']), side(lead('dual-1', 41), null));
    expect(a.next).toEqual({
      safe: 'to-only',
      situation: 'dual-leads-both',
      reason:
        'a dual candidate leads on both sides (from token 41, to token 41): once no old process is left, deploying to-only is safe',
    });
  });

  test('a leader on from that does not lead on to keeps dual and forbids to-only', () => {
    const a = assessMigration(side(lead('old-1', 7), ['old-1', 'dual-1']), side(null, null));
    expect(a.next).toEqual({
      safe: 'dual',
      situation: 'from-leader-not-on-to',
      reason:
        'the leader on from is not leading on to (an old process, or a dual one between its two leases): keep deploying dual; do not deploy to-only yet',
    });
  });

  test('different leaders on the two sides keep dual and warn about the forbidden mix', () => {
    const a = assessMigration(side(lead('old-1', 7), ['old-1']), side(lead('to-1', 9), null));
    expect(a.next.safe).toBe('dual');
    expect(a.next.situation).toBe('from-leader-not-on-to');
    expect(a.next.reason).toContain('do not deploy to-only yet');
    expect(a.next.reason).toContain('to is led by another candidate, to-1');
    expect(a.next.reason).toContain('must never do');
  });

  test('only to having a leader makes to-only safe and says when from can be retired', () => {
    const a = assessMigration(side(null, []), side(lead('to-1', 50), null));
    expect(a.next).toEqual({
      safe: 'to-only',
      situation: 'to-leads-alone',
      reason:
        'only to has a leader: dual or to-only processes lead; deploying to-only is safe; after the last dual process is gone from can be retired',
    });
  });

  test('no leader on either side means wait', () => {
    const a = assessMigration(side(null, []), side(null, null));
    expect(a.next).toEqual({ safe: 'wait', situation: 'no-leader', reason: 'no leader on either side: wait a lease and check again' });
  });

  test('one id leading both sides with to token below from token is not taken for a dual term', () => {
    const a = assessMigration(side(lead('web-1', 12), null), side(lead('web-1', 11), null));
    expect(a.next.safe).toBe('wait');
    expect(a.next.situation).toBe('tokens-out-of-order');
    expect(a.next.reason).toContain("to's token 11 is below from's 12");
  });

  test('a to token above the from token still proves a dual term (ZooKeeper as to, a force on to)', () => {
    const a = assessMigration(side(lead('web-1', 12), null), side(lead('web-1', 30), null));
    expect(a.next.safe).toBe('to-only');
  });

  test('an unreadable from names from, its code, and that no step is safe', () => {
    const a = assessMigration(down('BACKEND_UNAVAILABLE'), side(lead('x', 1), null));
    expect(a.next).toEqual({
      safe: 'none',
      situation: 'unreadable',
      reason: 'from could not be read (BACKEND_UNAVAILABLE): no step is safe until it answers',
    });
  });

  test('an unreadable to names to, its code, and that no step is safe', () => {
    const a = assessMigration(side(lead('x', 1), ['x']), down('BACKEND_ERROR'));
    expect(a.next).toEqual({
      safe: 'none',
      situation: 'unreadable',
      reason: 'to could not be read (BACKEND_ERROR): no step is safe until it answers',
    });
  });

  test('both sides unreadable names both', () => {
    const a = assessMigration(down('BACKEND_UNAVAILABLE'), down('BACKEND_ERROR'));
    expect(a.next.safe).toBe('none');
    expect(a.next.reason).toBe(
      'neither from (BACKEND_UNAVAILABLE) nor to (BACKEND_ERROR) could be read: no step is safe until both answer',
    );
  });
});

describe('assessMigration: phases', () => {
  test('both sides → dual, to only → to-only, from only → from; from order first', () => {
    const a = assessMigration(side(lead('d', 5), ['d', 'old', 'waiting']), side(lead('d', 5), ['d', 'new']));
    expect(a.candidates).toEqual([
      { id: 'd', phase: 'dual' },
      { id: 'old', phase: 'from' },
      { id: 'waiting', phase: 'from' },
      { id: 'new', phase: 'to-only' },
    ]);
  });

  test('a side that cannot list candidates contributes its leader only', () => {
    const a = assessMigration(side(lead('old', 3), ['old', 'd']), side(lead('t', 8), null));
    expect(a.candidates).toEqual([
      { id: 'old', phase: 'from' },
      { id: 'd', phase: 'from' },
      { id: 't', phase: 'to-only' },
    ]);
  });

  test('a leader missing from its own side list (reads a moment apart) still counts', () => {
    const a = assessMigration(side(lead('d', 5), ['x']), side(lead('d', 5), null));
    expect(a.candidates).toEqual([
      { id: 'd', phase: 'dual' },
      { id: 'x', phase: 'from' },
    ]);
  });

  test('when a side cannot be read every phase is unknown', () => {
    expect(assessMigration(side(lead('a', 1), ['a', 'b']), down()).candidates).toEqual([
      { id: 'a', phase: 'unknown' },
      { id: 'b', phase: 'unknown' },
    ]);
    expect(assessMigration(down(), side(lead('t', 1), null)).candidates).toEqual([{ id: 't', phase: 'unknown' }]);
  });

  test('no candidate anywhere gives an empty list', () => {
    expect(assessMigration(side(null, null), side(null, [])).candidates).toEqual([]);
  });
});

describe('assessMigration: every combination of facts', () => {
  const leaders = [null, lead('a', 10), lead('b', 10), lead('a', 9), lead('a', 11)];
  // Lists that cannot list, are empty, hold the leader, or hold others (and, for leader b, an id
  // twice: the function must not trust a list to be free of repeats).
  const lists = (leader: { candidateId: string } | null): Array<string[] | null> => [
    null,
    [],
    leader ? [leader.candidateId] : ['c'],
    leader ? [leader.candidateId, 'c', 'b'] : ['c', 'a'],
  ];
  const readings: SideReading[] = [down('BACKEND_UNAVAILABLE'), down('BACKEND_ERROR')];
  for (const leader of leaders) for (const list of lists(leader)) readings.push(side(leader, list));

  const cases = readings.flatMap((from) => readings.map((to) => [from, to] as const));

  test(`the safe step follows the leaders only, by the documented rule (${cases.length} combinations)`, () => {
    for (const [from, to] of cases) {
      const { next } = assessMigration(from, to);
      let expected: string;
      if (!from.ok || !to.ok) expected = 'none';
      else if (from.leader && to.leader && from.leader.candidateId === to.leader.candidateId) {
        expected = to.leader.token >= from.leader.token ? 'to-only' : 'wait';
      } else if (from.leader) expected = 'dual';
      else if (to.leader) expected = 'to-only';
      else expected = 'wait';
      expect({ from, to, safe: next.safe }).toEqual({ from, to, safe: expected });
      expect(next.reason.length).toBeGreaterThan(0);
      if (next.safe === 'none') expect(next.reason).toContain('no step is safe');
      if (next.safe === 'dual') expect(next.reason).toContain('do not deploy to-only yet');
      if (next.safe === 'to-only') expect(next.reason).toContain('deploying to-only is safe');
    }
  });

  test(`every candidate seen is listed once, with the phase of the sides it is seen on (${cases.length} combinations)`, () => {
    const known = (r: SideReading) => (r.ok ? [...(r.candidates ?? []), ...(r.leader ? [r.leader.candidateId] : [])] : []);
    for (const [from, to] of cases) {
      const { candidates } = assessMigration(from, to);
      const ids = candidates.map((c) => c.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(new Set(ids)).toEqual(new Set([...known(from), ...known(to)]));
      for (const { id, phase } of candidates) {
        const f = known(from).includes(id);
        const t = known(to).includes(id);
        const expected = !from.ok || !to.ok ? 'unknown' : f && t ? 'dual' : t ? 'to-only' : 'from';
        expect({ id, phase }).toEqual({ id, phase: expected });
      }
    }
  });

  test('the situation always matches the safe step', () => {
    const allowed: Record<string, string[]> = {
      none: ['unreadable'],
      'to-only': ['dual-leads-both', 'to-leads-alone'],
      dual: ['from-leader-not-on-to'],
      wait: ['tokens-out-of-order', 'no-leader'],
    };
    for (const [from, to] of cases) {
      const { next } = assessMigration(from, to);
      expect(allowed[next.safe]).toContain(next.situation);
    }
  });
});
