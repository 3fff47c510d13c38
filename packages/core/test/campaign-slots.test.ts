import { performance } from 'node:perf_hooks';
import { CampaignSlots } from '../src/campaign-slots';
import { ConclaveError } from '../src/errors';

const later = () => performance.now() + 10_000;

describe('CampaignSlots', () => {
  test('at most `limit` run; a freed slot goes to the newest waiter', async () => {
    const slots = new CampaignSlots('test', 2);
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
    const slots = new CampaignSlots('test', 1);
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

  test("a waiter whose caller gives up with a ConclaveError fails with that error, not one of its own", async () => {
    const slots = new CampaignSlots('test', 1);
    const running = await slots.acquire('e', later());
    const controller = new AbortController();
    const given = slots.acquire('e', later(), controller.signal);
    const reason = new ConclaveError('BACKEND_UNAVAILABLE', 'campaign timed out', { election: 'e' });
    controller.abort(reason);
    await expect(given).rejects.toBe(reason);
    running();
  });

  test('a waiter with a signal its caller never aborts still leaves once its deadline passes', async () => {
    const slots = new CampaignSlots('test', 1);
    await slots.acquire('e', later());
    const started = performance.now();
    const waiting = slots.acquire('e', performance.now() + 20, new AbortController().signal);
    await expect(waiting).rejects.toMatchObject({ code: 'BACKEND_UNAVAILABLE' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(19);
  });

  test('a waiter whose deadline passes fails with BACKEND_UNAVAILABLE', async () => {
    const slots = new CampaignSlots('test', 1);
    await slots.acquire('e', later());
    await expect(slots.acquire('e', performance.now() + 20)).rejects.toMatchObject({ code: 'BACKEND_UNAVAILABLE' });
  });

  test('a campaign that ends after its caller gave up halves the bound; campaigns in time raise it again', async () => {
    const slots = new CampaignSlots('test', 16);
    // The first is allowed 40 ms and runs past them: more than half of what it was allowed.
    const frees = [await slots.acquire('e', performance.now() + 40)];
    frees.push(...(await Promise.all(Array.from({ length: 15 }, () => slots.acquire('e', later())))));
    let admitted = 0;
    const waiters = Array.from({ length: 4 }, () => slots.acquire('e', later()).then((free) => (admitted++, free)));
    await new Promise((r) => setTimeout(r, 45));
    frees[0]!(true);
    expect(slots.bound()).toBe(8);
    // 15 still run, above the bound: a freed slot is handed on only once no more than 8 run.
    for (let i = 1; i <= 7; i++) frees[i]!();
    await new Promise((r) => setImmediate(r));
    expect(admitted).toBe(0);
    frees[8]!();
    await new Promise((r) => setImmediate(r));
    expect(admitted).toBe(1);
    for (let i = 9; i < 16; i++) frees[i]!();
    const more = await Promise.all(waiters);
    expect(admitted).toBe(4);
    more.forEach((free) => free());
    expect(slots.bound()).toBeGreaterThanOrEqual(8);
    // Never below its floor, and never above `most`.
    for (let i = 0; i < 200; i++) (await slots.acquire('e', later()))();
    expect(slots.bound()).toBe(16);
  });

  test('a campaign late only because it was admitted near the end of a long wait leaves the bound as it is', async () => {
    const slots = new CampaignSlots('test', 16);
    const frees = await Promise.all(Array.from({ length: 16 }, () => slots.acquire('e', later())));
    // Allowed 1 s, it waits 700 ms of it for a slot; ended late at once, it ran far less than half.
    const waiting = slots.acquire('e', performance.now() + 1000);
    await new Promise((r) => setTimeout(r, 700));
    frees[0]!();
    const late = await waiting;
    late(true);
    expect(slots.bound()).toBe(16);
    frees.slice(1).forEach((free) => free());
  });
});
