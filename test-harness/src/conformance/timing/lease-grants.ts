import { performance } from 'node:perf_hooks';
import type { Elector } from '@conclave/core';
import type { ControlledBackend, ControlledCall } from '../../controlled-backend';

/** A lease long enough that "well within the lease" is unambiguous on a slow, loaded machine. */
export const LONG_LEASE_MS = 8000;

/** The answer of a campaign or renewal that granted a lease, and how long it granted. */
export function grantOf(call: ControlledCall): number | null {
  if (call.deliveredAt === undefined || call.result === undefined) return null;
  if (call.method !== 'campaign' && call.method !== 'renew') return null;
  const r = call.result as { role?: string; held?: boolean; leaseMs?: number };
  return (r.role === 'leader' || r.held === true) && typeof r.leaseMs === 'number' ? r.leaseMs : null;
}

/**
 * The latest deadline the SPI allows `elector` after the answers `backend` delivered so far: the
 * send of a granted call, plus the lease granted (never more than asked), minus the margin.
 */
export function allowedDeadline(elector: Elector, backend: ControlledBackend): number {
  const { leaseMs, safetyMarginMs } = elector.options;
  let best = -Infinity;
  for (const call of backend.calls) {
    const granted = grantOf(call);
    if (granted !== null) best = Math.max(best, call.sentAt + Math.min(granted, leaseMs) - safetyMarginMs);
  }
  return best;
}

/** This Elector's deadline on the performance.now() timeline, or null when it does not lead. */
export function deadlineOf(elector: Elector): number | null {
  const now = performance.now();
  const remaining = elector.health().leaseRemainingMs;
  return elector.isLeader() && remaining !== null ? now + remaining : null;
}
