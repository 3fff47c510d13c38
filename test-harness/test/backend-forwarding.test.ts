import { describe, expect, test } from '@jest/globals';
import {
  BACKEND_METHODS,
  OPTIONAL_BACKEND_METHODS,
  ForwardingBackend,
  forwardBackend,
  operationOf,
  type BackendMethod,
  type ElectionBackend,
} from '@conclave/core/spi';
import { MigratingBackend } from '@conclave/migrate';
import { ControlledBackend, HangableBackend } from '@conclave/test-harness';

// Every wrapper of a backend must pass on the whole contract: each operation the inner backend
// has (and only those), with the same arguments and the same answer, and each part's
// declarations. The operations come from core's one list (BACKEND_METHODS), which fails to
// compile when the contract gains a part it does not name.

interface Recorded {
  method: BackendMethod;
  args: unknown[];
}

/** A fake backend that answers every call with a value naming the call, and records it. */
function fakeBackend(withOptional: boolean): { backend: ElectionBackend; calls: Recorded[]; hints: Array<() => void> } {
  const calls: Recorded[] = [];
  const hints: Array<() => void> = [];
  const op = (method: BackendMethod) => (...args: unknown[]) => {
    calls.push({ method, args });
    if (method === 'watch' || method === 'watchLeader') {
      hints.push(args[method === 'watch' ? 2 : 1] as () => void);
      return () => undefined;
    }
    if (method === 'isWatching') return true;
    return Promise.resolve({ answerOf: method });
  };
  const store = {
    kind: 'fake',
    campaign: op('campaign'),
    renew: op('renew'),
    release: op('release'),
    getLeader: op('getLeader'),
    close: op('close'),
  };
  if (!withOptional) return { backend: store as unknown as ElectionBackend, calls, hints };
  const backend = {
    ...store,
    admin: { forceLeader: op('forceLeader'), clearLeader: op('clearLeader'), electionExists: op('electionExists') },
    candidates: { list: op('listCandidates') },
    changes: { delivery: 'best-effort', leaseEnds: true, watch: op('watch'), isWatching: op('isWatching') },
    leaderChanges: { delivery: 'reliable', watch: op('watchLeader') },
    tokenFloor: { raise: op('raiseTokenFloor'), followsClock: true },
    leaderMetadata: { value: true, since: false, renewedAt: true, leaseEndsAt: false, transitions: true },
    staleLeaderMs: 4242,
  };
  return { backend: backend as unknown as ElectionBackend, calls, hints };
}

// The caller's deadline and signal are part of the request, passed on unchanged.
const timing = { signal: new AbortController().signal, deadlineMs: 98765 };
const ARGS: Record<BackendMethod, unknown[]> = {
  campaign: [{ election: 'e1', candidateId: 'c1', leaseMs: 1234, ...timing }],
  renew: [{ election: 'e1', candidateId: 'c1', token: 7, leaseMs: 1234, ...timing }],
  release: [{ election: 'e1', candidateId: 'c1', token: 7, ...timing }],
  getLeader: ['e1'],
  forceLeader: ['e1', 'c2', 4321],
  clearLeader: ['e1'],
  listCandidates: ['e1'],
  electionExists: ['e1'],
  raiseTokenFloor: ['e1', 99],
  watch: ['e1', 'c1'],
  isWatching: ['e1', 'c1'],
  watchLeader: ['e1'],
  close: [],
};

interface Wrapper {
  name: string;
  wrap(inner: ElectionBackend): ElectionBackend;
  /** The wrapper reports its own kind instead of the inner one. */
  ownKind?: boolean;
}

const other = () => fakeBackend(true).backend;

const WRAPPERS: Wrapper[] = [
  { name: 'forwardBackend', wrap: (inner) => forwardBackend(inner) },
  { name: 'forwardBackend with hooks', wrap: (inner) => forwardBackend(inner, { all: (_m, _a, invoke) => invoke(), campaign: (next, r) => next(r) }) },
  { name: 'ForwardingBackend', wrap: (inner) => new ForwardingBackend(inner) },
  { name: 'ControlledBackend', wrap: (inner) => new ControlledBackend(inner) },
  { name: 'HangableBackend', wrap: (inner) => new HangableBackend(inner) },
  { name: 'MigratingBackend (from-only)', wrap: (inner) => new MigratingBackend({ from: inner, to: other(), phase: 'from-only' }), ownKind: true },
  { name: 'MigratingBackend (to-only)', wrap: (inner) => new MigratingBackend({ from: other(), to: inner, phase: 'to-only' }), ownKind: true },
];

describe.each(WRAPPERS)('$name forwards the whole backend contract', (wrapper) => {
  test.each([...BACKEND_METHODS])('%s is passed on with its arguments and answer', async (method) => {
    const { backend, calls, hints } = fakeBackend(true);
    const wrapped = wrapper.wrap(backend);
    const fn = operationOf(wrapped, method);
    expect([method, typeof fn]).toEqual([method, 'function']);
    const args = method === 'watch' || method === 'watchLeader' ? [...ARGS[method], () => hintsSeen.push('hint')] : ARGS[method];
    const hintsSeen: string[] = [];
    const answer = await (fn as (...a: unknown[]) => unknown)(...args);
    const own = calls.filter((c) => c.method === method);
    expect(own).toHaveLength(1);
    expect(own[0]!.args.slice(0, ARGS[method].length)).toEqual(ARGS[method]);
    if (method === 'watch' || method === 'watchLeader') {
      expect(typeof answer).toBe('function');
      hints[0]!();
      expect(hintsSeen).toEqual(['hint']);
    } else if (method === 'isWatching') {
      expect(answer).toBe(true);
    } else if (method !== 'close') {
      // close() may close more than the inner backend (MigratingBackend closes both sides).
      expect(answer).toEqual({ answerOf: method });
    }
  });

  test('kind and the parts\' declarations are the inner backend\'s', () => {
    const { backend } = fakeBackend(true);
    const wrapped = wrapper.wrap(backend);
    expect(declarations(wrapped)).toEqual(declarations(backend));
    if (!wrapper.ownKind) expect(wrapped.kind).toBe('fake');
  });

  test('parts the inner backend lacks are absent, not faked', () => {
    const { backend } = fakeBackend(false);
    const wrapped = wrapper.wrap(backend);
    const present = OPTIONAL_BACKEND_METHODS.filter((m) => operationOf(wrapped, m) !== undefined);
    expect(present).toEqual([]);
    expect([wrapped.admin, wrapped.candidates, wrapped.changes, wrapped.leaderChanges, wrapped.tokenFloor]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

});

test('the operation list is exactly the contract (checked against a full fake backend)', () => {
  const { backend } = fakeBackend(true);
  const own = Object.entries(backend).flatMap(([key, value]) =>
    typeof value === 'function' ? [key] : typeof value === 'object' && value !== null ? Object.keys(value).filter((m) => typeof (value as Record<string, unknown>)[m] === 'function') : [],
  );
  expect(own).toHaveLength(BACKEND_METHODS.length);
  for (const m of BACKEND_METHODS) expect(operationOf(backend, m)).toBeDefined();
  for (const m of OPTIONAL_BACKEND_METHODS) expect(BACKEND_METHODS).toContain(m);
});

/** What a caller reads without calling: the parts' plain values and the declarations. */
function declarations(backend: ElectionBackend) {
  return {
    changes: backend.changes && { delivery: backend.changes.delivery, leaseEnds: backend.changes.leaseEnds },
    leaderChanges: backend.leaderChanges?.delivery,
    followsClock: backend.tokenFloor?.followsClock,
    leaderMetadata: backend.leaderMetadata,
    staleLeaderMs: backend.staleLeaderMs,
  };
}
