import { performance } from 'node:perf_hooks';
import { CampaignSlots } from '../src/zookeeper-campaign-slots';

const later = () => performance.now() + 10_000;

describe('CampaignSlots', () => {
  test('at most `limit` run; a freed slot goes to the newest waiter', async () => {
    const slots = new CampaignSlots(2);
    const a = await slots.acquire('e', later());
    const b = await slots.acquire('e', later());
    const order: string[] = [];
    const c = slots.acquire('e', later()).then((free) => (order.push('c'), free));
    const d = slots.acquire('e', later()).then((free) => (order.push('d'), free));
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual([]);
    a();
    a(); // freeing twice frees once
    const freeD = await d;
    expect(order).toEqual(['d']);
    b();
    const freeC = await c;
    expect(order).toEqual(['d', 'c']);
    freeC();
    freeD();
    // Both slots are free again: two more run at once.
    await slots.acquire('e', later());
    await slots.acquire('e', later());
  });

  test('a waiter whose caller gives up leaves unsent (BACKEND_UNAVAILABLE) and its turn passes on', async () => {
    const slots = new CampaignSlots(1);
    const running = await slots.acquire('e', later());
    const old = slots.acquire('e', later());
    const controller = new AbortController();
    const given = slots.acquire('e', later(), controller.signal);
    controller.abort(new Error('deadline'));
    await expect(given).rejects.toMatchObject({ code: 'BACKEND_UNAVAILABLE' });
    running();
    await expect(old).resolves.toEqual(expect.any(Function));
    const aborted = new AbortController();
    aborted.abort(new Error('before'));
    await expect(slots.acquire('e', later(), aborted.signal)).rejects.toMatchObject({ code: 'BACKEND_UNAVAILABLE' });
  });

  test('a waiter whose deadline passes fails with BACKEND_UNAVAILABLE', async () => {
    const slots = new CampaignSlots(1);
    await slots.acquire('e', later());
    await expect(slots.acquire('e', performance.now() + 20)).rejects.toMatchObject({ code: 'BACKEND_UNAVAILABLE' });
  });
});
