import { MemoryBackend } from '@conclave/core';
import { MigratingBackend } from '@conclave/migrate';

/** MigratingBackend options are checked in the constructor, before any I/O. */

test('an unknown option key throws INVALID_OPTIONS from the constructor, naming it and the close known one', () => {
  const from = new MemoryBackend();
  const to = new MemoryBackend();
  expect(() => new MigratingBackend({ from, to, phase: 'dual', closeBackend: false } as never)).toThrow(
    expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringMatching(/"closeBackend".*did you mean closeBackends\?/) }),
  );
});
