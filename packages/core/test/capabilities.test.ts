import { Elector, MemoryBackend } from '@conclave/core';
import {
  CAPABILITY_METHODS,
  ForwardingBackend,
  NO_LEADER_METADATA,
  assertCapabilitiesConsistent,
  capabilityOf,
  forwardBackend,
  supports,
  type BackendCapabilities,
  type ElectionBackend,
} from '@conclave/core/spi';

/** A memory backend declaring `capabilities`, with the optional methods named in `hidden` taken away. */
function backendWith(capabilities: BackendCapabilities, hidden: string[] = []): ElectionBackend {
  const backend = new MemoryBackend();
  Object.defineProperty(backend, 'capabilities', { value: capabilities });
  for (const method of hidden) Object.defineProperty(backend, method, { value: undefined });
  return backend;
}

const NOTHING: BackendCapabilities = { listCandidates: false, push: 'none' };
const ALL_METHODS = [...Object.values(CAPABILITY_METHODS), 'isWatching'];

test('capabilityOf reads the declaration, absent flags as their default; supports says whether one is declared', () => {
  const bare = { capabilities: NOTHING };
  expect(capabilityOf(bare, 'push')).toBe('none');
  expect(capabilityOf(bare, 'leaderPush')).toBe('none');
  expect(capabilityOf(bare, 'tokenFloor')).toBe(false);
  expect(capabilityOf(bare, 'tokenClock')).toBe(false);
  expect(capabilityOf(bare, 'leaseEndPush')).toBe(false);
  expect(capabilityOf(bare, 'leaderMetadata')).toEqual(NO_LEADER_METADATA);
  for (const capability of ['listCandidates', 'push', 'leaderPush', 'tokenFloor', 'tokenClock', 'leaseEndPush'] as const) {
    expect(supports(bare, capability)).toBe(false);
  }
  const memory = new MemoryBackend();
  expect(capabilityOf(memory, 'push')).toBe('best-effort');
  expect(supports(memory, 'push')).toBe(true);
  expect(supports(memory, 'tokenFloor')).toBe(true);
  expect(supports(memory, 'leaderPush')).toBe(true);
  // Only the declaration counts: a class's static one is read the same way, with no instance.
  expect(supports({ capabilities: { listCandidates: true, push: 'reliable', tokenClock: true } }, 'tokenClock')).toBe(true);
});

test('a backend whose methods match its declaration passes, with all of them or none', () => {
  expect(() => assertCapabilitiesConsistent(new MemoryBackend())).not.toThrow();
  expect(() => assertCapabilitiesConsistent(backendWith(NOTHING, ALL_METHODS))).not.toThrow();
});

test.each([
  ['tokenFloor: true without raiseTokenFloor', backendWith({ ...new MemoryBackend().capabilities }, ['raiseTokenFloor']), /declares capabilities.tokenFloor: true but has no raiseTokenFloor/],
  ['raiseTokenFloor without tokenFloor', backendWith({ ...new MemoryBackend().capabilities, tokenFloor: false }), /has raiseTokenFloor\(\) but declares capabilities.tokenFloor: false/],
  ['listCandidates without its flag', backendWith(NOTHING, ALL_METHODS.filter((m) => m !== 'listCandidates')), /has listCandidates\(\)/],
  ['push without watch', backendWith({ ...NOTHING, push: 'reliable' }, ALL_METHODS), /declares capabilities.push: "reliable" but has no watch/],
  ['watchLeader with leaderPush none', backendWith({ ...NOTHING, leaderPush: 'none' }, ALL_METHODS.filter((m) => m !== 'watchLeader')), /has watchLeader\(\)/],
  ['leaseEndPush without push', backendWith({ ...NOTHING, leaseEndPush: true }, ALL_METHODS), /declares capabilities.leaseEndPush without capabilities.push: "none"/],
  ['isWatching without push', Object.assign(backendWith(NOTHING, ALL_METHODS.filter((m) => m !== 'isWatching')), { isWatching: () => true }), /has isWatching\(\) but declares capabilities.push: "none"/],
])('%s is refused with INVALID_OPTIONS, naming the disagreement', (_name, backend, message) => {
  expect(() => assertCapabilitiesConsistent(backend)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringMatching(message) }));
});

test('the Elector and the forwarding wrappers refuse a backend whose methods disagree with its declaration', () => {
  const broken = backendWith({ ...new MemoryBackend().capabilities }, ['raiseTokenFloor']);
  const refused = expect.objectContaining({ code: 'INVALID_OPTIONS' });
  expect(() => new Elector({ backend: broken, election: 'e', candidateId: 'a' })).toThrow(refused);
  expect(() => forwardBackend(broken)).toThrow(refused);
  expect(() => new ForwardingBackend(broken)).toThrow(refused);
});
