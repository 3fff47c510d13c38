import { expect, test } from '@jest/globals';
import { grantedFrom } from '../src/etcd-leases';

// The lease granted to the core is the TTL counted from the keep-alive it rests on, rounded down
// to a whole 100 ms below, so that the renewals of one turn share one grant and one renew grid.

test('a grant is a whole 100 ms below the TTL left from the keep-alive, wherever performance.now() is (no rounding up where start + TTL crosses a power of two)', () => {
  for (const start of [1000.5, 6500.123, 130000.77, 131071.9, 262143.25, 1_000_000.3]) {
    expect([start, grantedFrom(start, { sentAt: start + 1, ttlMs: 2000 })]).toEqual([start, 1900]);
    expect([start, grantedFrom(start, { sentAt: start - 50.5, ttlMs: 2000 })]).toEqual([start, 1900]);
    expect([start, grantedFrom(start, { sentAt: start - 150.5, ttlMs: 2000 })]).toEqual([start, 1800]);
  }
});
