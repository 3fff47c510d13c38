import { ConclaveError, Elector, MemoryBackend, installShutdownHook, isConclaveError } from '@conclave/core';
import { assertOptionKeys, closestWord, optionKeys } from '@conclave/core/spi';

/** Unknown option keys are refused with INVALID_OPTIONS before any I/O, with a suggestion when one is close. */

function thrownBy(fn: () => unknown): ConclaveError {
  try {
    fn();
  } catch (err) {
    if (isConclaveError(err)) return err;
    throw err;
  }
  throw new Error('expected a throw');
}

const KNOWN = optionKeys<{ leaseMs?: number; renewMs?: number; logger?: object }>({ leaseMs: true, renewMs: true, logger: true });

describe('closestWord', () => {
  test.each([
    ['leaseMS', 'leaseMs'],
    ['LEASEMS', 'leaseMs'],
    ['leseMs', 'leaseMs'],
    ['renew', 'renewMs'],
    ['foo', undefined],
  ])('%s → %p (case ignored, the known spelling returned)', (typed, meant) => {
    expect(closestWord(typed, KNOWN)).toBe(meant);
  });

  test('case is ignored on both sides: a typo or a prefix in another case finds a known word with capitals', () => {
    const known = ['lockTTLMs', 'leaseMs'];
    expect(closestWord('lockttlmz', known)).toBe('lockTTLMs');
    expect(closestWord('LOCKT', known)).toBe('lockTTLMs');
  });
});

describe('assertOptionKeys', () => {
  test('known keys pass, whatever their values; a nested bag is not looked into', () => {
    expect(() => assertOptionKeys({ leaseMs: 1, logger: { anything: true } }, KNOWN, 'X options')).not.toThrow();
    expect(() => assertOptionKeys({}, KNOWN, 'X options')).not.toThrow();
  });

  test('a key in another case is INVALID_OPTIONS naming it and suggesting the known spelling', () => {
    const err = thrownBy(() => assertOptionKeys({ leaseMS: 3000 }, KNOWN, 'X options', 'memory'));
    expect(err.code).toBe('INVALID_OPTIONS');
    expect(err.message).toContain('"leaseMS"');
    expect(err.message).toContain('did you mean leaseMs?');
    expect(err.backend).toBe('memory');
  });

  test('an unrelated key is INVALID_OPTIONS naming it, with the known keys and no suggestion', () => {
    const err = thrownBy(() => assertOptionKeys({ leaseMs: 1, foo: 1 }, KNOWN, 'X options'));
    expect(err.code).toBe('INVALID_OPTIONS');
    expect(err.message).toContain('"foo"');
    expect(err.message).toContain('known: leaseMs, renewMs, logger');
    expect(err.message).not.toContain('did you mean');
  });

  test('a key whose value is undefined is still refused: it is still a misspelling', () => {
    expect(thrownBy(() => assertOptionKeys({ leaseMS: undefined }, KNOWN, 'X options')).code).toBe('INVALID_OPTIONS');
  });

  test('something that is not an object is INVALID_OPTIONS', () => {
    for (const bad of [undefined, null, 'x', [1]]) {
      expect(thrownBy(() => assertOptionKeys(bad, KNOWN, 'X options')).code).toBe('INVALID_OPTIONS');
    }
  });
});

describe('public constructors and functions refuse unknown option keys', () => {
  test('Elector: leaseMS is refused naming leaseMS and suggesting leaseMs', () => {
    const backend = new MemoryBackend();
    const err = thrownBy(() => new Elector({ backend, election: 'opts', candidateId: 'a', leaseMS: 3000 } as never));
    expect(err.code).toBe('INVALID_OPTIONS');
    expect(err.message).toMatch(/"leaseMS".*did you mean leaseMs\?/);
  });

  test('Elector: a misspelt key in its own metrics bag (electionAtribute) is refused, suggesting electionAttribute', () => {
    const backend = new MemoryBackend();
    const err = thrownBy(() => new Elector({ backend, election: 'opts', metrics: { electionAtribute: true } } as never));
    expect(err.code).toBe('INVALID_OPTIONS');
    expect(err.message).toMatch(/"electionAtribute" in metrics.*did you mean electionAttribute\?/);
  });

  test('Elector: an unrelated key foo is refused naming foo, with no suggestion', () => {
    const backend = new MemoryBackend();
    const err = thrownBy(() => new Elector({ backend, election: 'opts', foo: 1 } as never));
    expect(err.code).toBe('INVALID_OPTIONS');
    expect(err.message).toContain('"foo"');
    expect(err.message).not.toContain('did you mean');
  });

  test('MemoryBackend: defaultLeaseMS is refused, suggesting defaultLeaseMs', () => {
    const err = thrownBy(() => new MemoryBackend({ defaultLeaseMS: 5000 } as never));
    expect(err.code).toBe('INVALID_OPTIONS');
    expect(err.message).toContain('did you mean defaultLeaseMs?');
  });

  test('runOnce: an unknown key rejects before campaigning, suggesting waitMs', async () => {
    const backend = new MemoryBackend();
    const e = new Elector({ backend, election: 'opts-once', candidateId: 'a' });
    const task = jest.fn();
    await expect(e.runOnce(task, { wait: 100 } as never)).rejects.toMatchObject({
      code: 'INVALID_OPTIONS',
      message: expect.stringContaining('did you mean waitMs?'),
    });
    expect(task).not.toHaveBeenCalled();
    expect(e.state.role).toBe('stopped');
    expect(await backend.getLeader('opts-once')).toBeNull();
  });

  test('waitForLeadership: an unknown key rejects, suggesting timeoutMs', async () => {
    const e = new Elector({ backend: new MemoryBackend(), election: 'opts-wait', candidateId: 'a' });
    await expect(e.waitForLeadership({ timeout: 5 } as never)).rejects.toMatchObject({
      code: 'INVALID_OPTIONS',
      message: expect.stringContaining('did you mean timeoutMs?'),
    });
  });

  test('installShutdownHook: an unknown key throws and installs no handler', () => {
    const e = new Elector({ backend: new MemoryBackend(), election: 'opts-hook', candidateId: 'a' });
    const before = process.listenerCount('SIGTERM');
    const err = thrownBy(() => installShutdownHook(e, { timeout: 5 } as never));
    expect(err.code).toBe('INVALID_OPTIONS');
    expect(err.message).toContain('did you mean timeoutMs?');
    expect(process.listenerCount('SIGTERM')).toBe(before);
  });
});
