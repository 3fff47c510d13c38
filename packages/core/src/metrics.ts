import { metrics, type Attributes, type Counter, type Histogram, type ObservableGauge } from '@opentelemetry/api';

/**
 * OpenTelemetry instruments of every Elector in the process. `@opentelemetry/api` is a no-op until
 * the application registers an SDK, so these cost next to nothing by default.
 *
 * - `conclave.transitions` (counter): role changes, by election, role and reason.
 * - `conclave.backend.duration` (histogram, ms): campaign/renew/release round trips, by
 *   election, backend, operation and outcome.
 * - `conclave.backend.errors` (counter): failed backend calls, by election, backend, operation
 *   and error code.
 * - `conclave.lease.remaining` (gauge, ms): time left before a leader's deadline, by election.
 */
export interface ElectorMetrics {
  transition(attributes: Attributes): void;
  backendCall(durationMs: number, attributes: Attributes): void;
  backendError(attributes: Attributes): void;
  /** Registers a source of `conclave.lease.remaining`; returns the function that removes it. */
  observeLease(read: () => { remainingMs: number; attributes: Attributes } | null): () => void;
}

let shared: ElectorMetrics | null = null;

/** The process-wide instruments, created on first use from the global MeterProvider. */
export function electorMetrics(): ElectorMetrics {
  if (shared) return shared;
  const meter = metrics.getMeter('@conclave/core');
  const transitions: Counter = meter.createCounter('conclave.transitions', {
    description: 'Leadership role changes',
  });
  const duration: Histogram = meter.createHistogram('conclave.backend.duration', {
    description: 'Backend call round trip',
    unit: 'ms',
  });
  const errors: Counter = meter.createCounter('conclave.backend.errors', { description: 'Failed backend calls' });
  const remaining: ObservableGauge = meter.createObservableGauge('conclave.lease.remaining', {
    description: "Time left before the leader's lease deadline",
    unit: 'ms',
  });
  const sources = new Set<() => { remainingMs: number; attributes: Attributes } | null>();
  remaining.addCallback((result) => {
    for (const read of sources) {
      const value = read();
      if (value) result.observe(value.remainingMs, value.attributes);
    }
  });
  shared = {
    transition: (attributes) => transitions.add(1, attributes),
    backendCall: (ms, attributes) => duration.record(ms, attributes),
    backendError: (attributes) => errors.add(1, attributes),
    observeLease: (read) => {
      sources.add(read);
      return () => sources.delete(read);
    },
  };
  return shared;
}
