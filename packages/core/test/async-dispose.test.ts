import { Elector, MemoryBackend } from '@conclave/core';
import { ForwardingBackend } from '@conclave/core/spi';

describe('Elector and backends with await using', () => {
  test('leaving the scope stops the Elector (releasing) and closes the backend', async () => {
    const backend = new MemoryBackend();
    let elector: Elector | undefined;
    {
      await using b = backend;
      await using e = new Elector({ backend: b, election: 'dispose', candidateId: 'a', leaseMs: 600 });
      elector = e;
      await e.start();
      expect(e.isLeader()).toBe(true);
    }
    expect(elector.state.role).toBe('stopped');
    await expect(backend.getLeader('dispose')).rejects.toMatchObject({ code: 'CLOSED' });
  });

  test('a forwarding backend closes its inner backend when the scope ends', async () => {
    const inner = new MemoryBackend();
    {
      await using wrapper = new ForwardingBackend(inner);
      expect(await wrapper.getLeader('dispose')).toBeNull();
    }
    await expect(inner.getLeader('dispose')).rejects.toMatchObject({ code: 'CLOSED' });
  });
});
