import { MemoryBackend } from '@conclave/core';
import { MigratingBackend } from '@conclave/migrate';

test('a migrating backend closes both sides when an await using scope ends', async () => {
  const from = new MemoryBackend();
  const to = new MemoryBackend();
  {
    await using backend = new MigratingBackend({ from, to, phase: 'dual' });
    expect(await backend.getLeader('dispose')).toBeNull();
  }
  await expect(from.getLeader('dispose')).rejects.toMatchObject({ code: 'CLOSED' });
  await expect(to.getLeader('dispose')).rejects.toMatchObject({ code: 'CLOSED' });
});
