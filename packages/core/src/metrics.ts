import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { metrics } from '@opentelemetry/api';

/**
 * OpenTelemetry instruments of the Electors in a process, named and measured after OpenTelemetry's
 * semantic conventions (durations in seconds, counts with a `{…}` unit, failures as `error.type`).
 * The meter is `@conclave/core` with the package's version. `@opentelemetry/api` is a no-op until
 * the application registers an SDK, so these cost next to nothing by default.
 *
 * | Instrument | Kind, unit | Attributes |
 * | --- | --- | --- |
 * | `conclave.transitions` | counter, `{transition}` | `conclave.role`, `conclave.revoke.reason` |
 * | `conclave.backend.call.duration` | histogram, `s` | `conclave.backend.kind`, `conclave.operation.name`, `error.type` (failed calls only) |
 * | `conclave.lease.remaining` | gauge, `s` | none: the least time left of the leaders in the process |
 *
 * Every instrument also carries `conclave.election` when `electionAttribute` is on; the gauge
 * then reports each election's own lease.
 */
export interface ElectorMetricsOptions {
  /** Where the instruments come from. Default: the global MeterProvider of `@opentelemetry/api`. */
  meterProvider?: MeterProviderLike;
  /**
   * Adds the election's name as `conclave.election` to every measurement. Default false: an SDK
   * keeps at most 2 000 attribute sets per instrument by default, fewer than the elections one
   * process can run; turn it on when a process runs a few elections, or raise the SDK's limit.
   */
  electionAttribute?: boolean;
}

type Attributes = Record<string, string | number | boolean>;
interface InstrumentOptions {
  description?: string;
  unit?: string;
  advice?: { explicitBucketBoundaries?: number[] };
}

/**
 * The part of an OpenTelemetry `MeterProvider` that conclave uses, declared here so that the
 * provider of any SDK version fits, whichever copy of `@opentelemetry/api` its types come from.
 */
export interface MeterProviderLike {
  /** Returns the meter conclave creates its instruments on (`@conclave/core`, with its version). */
  getMeter(name: string, version?: string): {
    /** Creates the transitions counter. */
    createCounter(name: string, options?: InstrumentOptions): {
      /** Counts `value` with these attributes. */
      add(value: number, attributes?: Attributes): void;
    };
    /** Creates the backend call duration histogram. */
    createHistogram(name: string, options?: InstrumentOptions): {
      /** Records one duration, seconds. */
      record(value: number, attributes?: Attributes): void;
    };
    /** Creates the lease remaining gauge. */
    createObservableGauge(
      name: string,
      options?: InstrumentOptions,
    ): {
      /** Registers the callback that observes the gauge at each collection. */
      addCallback(callback: (result: { observe(value: number, attributes?: Attributes): void }) => void): void;
    };
  };
}

/** What one Elector records; built by `electorMetrics`. */
export interface ElectorMetrics {
  /** A role change to `role`; `reason` when leadership was given up. */
  transition(role: string, reason: string | undefined): void;
  /** One backend call; `errorType` is set when it failed. */
  backendCall(operation: 'campaign' | 'renew' | 'release', durationMs: number, errorType?: string): void;
  /** Registers this Elector's lease for `conclave.lease.remaining`; returns the function that removes it. */
  observeLease(remainingMs: () => number | null): () => void;
}

/** Bucket bounds for call durations, s: the ones OpenTelemetry advises for HTTP calls. */
const DURATION_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

interface Instruments {
  record(name: 'transition' | 'call', value: number, attributes: Attributes): void;
  leases: Set<{ read: () => number | null; attributes: Attributes }>;
}

// One set of instruments per MeterProvider, so that Electors share them.
const byProvider = new WeakMap<MeterProviderLike, Instruments>();

let version: string | undefined;
function packageVersion(): string | undefined {
  if (version === undefined) {
    try {
      // src/ and dist/ both sit next to package.json.
      version = String(JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')).version);
    } catch {
      version = '';
    }
  }
  return version || undefined;
}

function instruments(provider: MeterProviderLike): Instruments {
  const existing = byProvider.get(provider);
  if (existing) return existing;
  const meter = provider.getMeter('@conclave/core', packageVersion());
  const transitions = meter.createCounter('conclave.transitions', {
    description: 'Changes of an Elector’s role (follower, leader, paused, stopped)',
    unit: '{transition}',
  });
  const duration = meter.createHistogram('conclave.backend.call.duration', {
    description: 'Duration of backend calls (campaign, renew, release), failed ones included',
    unit: 's',
    advice: { explicitBucketBoundaries: DURATION_BUCKETS_S },
  });
  const remaining = meter.createObservableGauge('conclave.lease.remaining', {
    description: 'Time left before a leader’s lease deadline on its own clock',
    unit: 's',
  });
  const leases: Instruments['leases'] = new Set();
  remaining.addCallback((result) => {
    // Without the election attribute, one value: the leader nearest its deadline.
    const least = new Map<string, { seconds: number; attributes: Attributes }>();
    for (const lease of leases) {
      const ms = lease.read();
      if (ms === null) continue;
      const key = String(lease.attributes['conclave.election'] ?? '');
      const seconds = Math.max(0, ms) / 1000;
      const seen = least.get(key);
      if (!seen || seconds < seen.seconds) least.set(key, { seconds, attributes: lease.attributes });
    }
    for (const { seconds, attributes } of least.values()) result.observe(seconds, attributes);
  });
  const made: Instruments = {
    record: (name, value, attributes) =>
      name === 'transition' ? transitions.add(value, attributes) : duration.record(value, attributes),
    leases,
  };
  byProvider.set(provider, made);
  return made;
}

/**
 * Without the election attribute nothing an Elector records is its own: the Electors of one
 * backend kind and one provider (or the global one) share one `ElectorMetrics`, rather than a
 * dozen objects each.
 */
const shared = new Map<string, ElectorMetrics>();
const sharedByProvider = new WeakMap<MeterProviderLike, Map<string, ElectorMetrics>>();

/** The instruments of one Elector of `election` on a backend of `backendKind`. */
export function electorMetrics(election: string, backendKind: string, options: ElectorMetricsOptions = {}): ElectorMetrics {
  if (options.electionAttribute) return made(election, backendKind, options);
  const { meterProvider } = options;
  let byKind = shared;
  if (meterProvider) {
    byKind = sharedByProvider.get(meterProvider) ?? new Map();
    sharedByProvider.set(meterProvider, byKind);
  }
  let found = byKind.get(backendKind);
  if (!found) {
    found = made(election, backendKind, options);
    byKind.set(backendKind, found);
  }
  return found;
}

function made(election: string, backendKind: string, options: ElectorMetricsOptions): ElectorMetrics {
  // The global provider is looked up at each use, so that an SDK registered after the Elector
  // started still gets its measurements.
  const get = () => instruments(options.meterProvider ?? metrics.getMeterProvider());
  const base: Attributes = options.electionAttribute ? { 'conclave.election': election } : {};
  // The attributes of a call that succeeded, made once: a leader of thousands of elections
  // records thousands of calls a second.
  const callAttributes = (operation: 'campaign' | 'renew' | 'release'): Attributes =>
    Object.freeze({ ...base, 'conclave.backend.kind': backendKind, 'conclave.operation.name': operation });
  const succeeded = { campaign: callAttributes('campaign'), renew: callAttributes('renew'), release: callAttributes('release') };
  return {
    transition: (role, reason) =>
      get().record('transition', 1, {
        ...base,
        'conclave.role': role,
        ...(reason === undefined ? {} : { 'conclave.revoke.reason': reason }),
      }),
    backendCall: (operation, durationMs, errorType) =>
      get().record(
        'call',
        durationMs / 1000,
        errorType === undefined ? succeeded[operation] : { ...succeeded[operation], 'error.type': errorType },
      ),
    observeLease: (read) => {
      const lease = { read, attributes: base };
      const set = get().leases;
      set.add(lease);
      return () => set.delete(lease);
    },
  };
}
