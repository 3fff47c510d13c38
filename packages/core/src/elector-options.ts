import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { ElectionBackend } from './backend';
import { ConclaveError } from './errors';
import { defaultLogger, silentLogger, type Logger } from './logger';
import type { ElectorMetricsOptions } from './metrics';
import { assertOptionKeys, optionKeys } from './option-keys';
import { assertCandidateId, assertElectionName, assertLeaderValue, assertPositiveInteger, describe } from './validation';

/**
 * Options of `new Elector(options)`. Checked before any I/O: an unknown key or an invalid value
 * throws `ConclaveError` with code `INVALID_OPTIONS` (or `INVALID_NAME` for names). Durations in ms.
 */
export interface ElectorOptions {
  /** Where the election is held. Required. */
  backend: ElectionBackend;
  /** The election's name: letters, digits and `. _ : -`, at most 128 characters. Required. */
  election: string;
  /** This candidate's id. Default `hostname:pid:<random>`, unique per Elector. */
  candidateId?: string;
  /** How long a lease lasts on the server, ms. Default 10 000. */
  leaseMs?: number;
  /** How often the leader renews, ms. Default leaseMs / 3. Must be < leaseMs − safetyMarginMs. */
  renewMs?: number;
  /** How often a follower tries again when the backend cannot push, ms. Default leaseMs / 5. */
  retryMs?: number;
  /**
   * Allowance for clock-rate drift between this process and the server, ms: `isLeader()` turns
   * false this long before the server can let the lease go. Default max(50, 2 % of leaseMs).
   */
  safetyMarginMs?: number;
  /**
   * A small value published with every campaign (e.g. this candidate's address), at most 1024
   * UTF-8 bytes; `backend.getLeader()` reports the leader's where the backend keeps it
   * (`leaderMetadata.value`). Default: none.
   */
  value?: string;
  /**
   * pino-shaped logger (see `fromWinston` for winston). Default: console output when `CONCLAVE_LOG`
   * is set; otherwise one warning on stderr when the backend has not answered for longer than a
   * lease, and one when it answers again. `null`: nothing at all.
   */
  logger?: Logger | null;
  /** OpenTelemetry: which MeterProvider, and whether to label by election (default off). */
  metrics?: ElectorMetricsOptions;
}

const ELECTOR_OPTION_KEYS = optionKeys<ElectorOptions>({
  backend: true,
  election: true,
  candidateId: true,
  leaseMs: true,
  renewMs: true,
  retryMs: true,
  safetyMarginMs: true,
  value: true,
  logger: true,
  metrics: true,
});

const METRICS_OPTION_KEYS = optionKeys<ElectorMetricsOptions>({ meterProvider: true, electionAttribute: true });

/** ElectorOptions with every default filled in. */
export interface ResolvedElectorOptions {
  backend: ElectionBackend;
  election: string;
  candidateId: string;
  leaseMs: number;
  renewMs: number;
  retryMs: number;
  safetyMarginMs: number;
  /** Published with every campaign; undefined when none. */
  value: string | undefined;
  logger: Logger;
  /** Whether to write the default warning when the backend is lost (no logger was given). */
  warnUnreachable: boolean;
  metrics: ElectorMetricsOptions;
}

/** The default `leaseMs`, ms. */
export const DEFAULT_LEASE_MS = 10_000;

/** A readable id that is unique per Elector: `hostname:pid:6 hex chars`. */
export function defaultCandidateId(): string {
  const host = hostname().replace(/[^\x21-\x7e]/g, '-').slice(0, 100) || 'host';
  return `${host}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

/** Validates options (unknown keys included) and fills defaults. Throws `INVALID_OPTIONS` / `INVALID_NAME`; does no I/O. */
export function resolveElectorOptions(options: unknown): ResolvedElectorOptions {
  assertOptionKeys(options, ELECTOR_OPTION_KEYS, 'Elector options');
  const o = options as Partial<ElectorOptions>;
  const backend = o.backend;
  if (
    typeof backend !== 'object' ||
    backend === null ||
    typeof backend.campaign !== 'function' ||
    typeof backend.renew !== 'function' ||
    typeof backend.release !== 'function'
  ) {
    throw new ConclaveError('INVALID_OPTIONS', `backend must be an ElectionBackend, got ${describe(backend)}`);
  }
  assertElectionName(o.election, backend.kind);
  const candidateId = o.candidateId === undefined ? defaultCandidateId() : o.candidateId;
  assertCandidateId(candidateId, backend.kind, o.election);

  const leaseMs = o.leaseMs ?? DEFAULT_LEASE_MS;
  assertPositiveInteger(leaseMs, 'leaseMs');
  const renewMs = o.renewMs ?? Math.max(1, Math.floor(leaseMs / 3));
  assertPositiveInteger(renewMs, 'renewMs');
  const retryMs = o.retryMs ?? Math.max(1, Math.floor(leaseMs / 5));
  assertPositiveInteger(retryMs, 'retryMs');
  const safetyMarginMs = o.safetyMarginMs ?? Math.max(50, Math.ceil(leaseMs * 0.02));
  assertPositiveInteger(safetyMarginMs, 'safetyMarginMs');

  if (safetyMarginMs >= leaseMs) {
    throw new ConclaveError(
      'INVALID_OPTIONS',
      `safetyMarginMs (${safetyMarginMs}) must be less than leaseMs (${leaseMs})`,
      { election: o.election },
    );
  }
  if (renewMs >= leaseMs - safetyMarginMs) {
    throw new ConclaveError(
      'INVALID_OPTIONS',
      `renewMs (${renewMs}) must be less than leaseMs − safetyMarginMs (${leaseMs - safetyMarginMs}), or the lease runs out before it is renewed`,
      { election: o.election },
    );
  }
  if (o.value !== undefined) assertLeaderValue(o.value, backend.kind, o.election);
  const logger = o.logger === null ? silentLogger : o.logger ?? defaultLogger();
  if (typeof logger !== 'object' || logger === null || ['debug', 'info', 'warn', 'error'].some((l) => typeof (logger as unknown as Record<string, unknown>)[l] !== 'function')) {
    throw new ConclaveError('INVALID_OPTIONS', 'logger must have debug, info, warn and error methods', {
      election: o.election,
    });
  }
  // With no logger (and no CONCLAVE_LOG), an outage must still be visible.
  const warnUnreachable = o.logger === undefined && logger === silentLogger;
  const metrics = o.metrics ?? {};
  // conclave's own bag, checked like the top level (a misspelt key would be ignored).
  assertOptionKeys(metrics, METRICS_OPTION_KEYS, 'metrics');
  if (metrics.electionAttribute !== undefined && typeof metrics.electionAttribute !== 'boolean') {
    throw new ConclaveError('INVALID_OPTIONS', `metrics.electionAttribute must be a boolean, got ${describe(metrics.electionAttribute)}`, {
      election: o.election,
    });
  }
  return { backend, election: o.election, candidateId, leaseMs, renewMs, retryMs, safetyMarginMs, value: o.value, logger, warnUnreachable, metrics };
}
