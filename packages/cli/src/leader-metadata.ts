import { leaderMetadataOf, type ElectionBackend, type LeaderInfo } from '@conclave/core/spi';

/** The leader metadata fields of `conclave status --json`: null when the backend cannot tell. */
export interface LeaderMetadataJson {
  value: string | null;
  /** Server time, ms since the epoch. */
  since: number | null;
  renewedAt: number | null;
  leaseEndsAt: number | null;
  transitions: number | null;
}

export function leaderMetadataJson(leader: LeaderInfo | null): LeaderMetadataJson {
  return {
    value: leader?.value ?? null,
    since: leader?.since ?? null,
    renewedAt: leader?.renewedAt ?? null,
    leaseEndsAt: leader?.leaseEndsAt ?? null,
    transitions: leader?.transitions ?? null,
  };
}

/**
 * Text lines for the metadata the backend keeps (the others are left out): times as ISO strings,
 * with how long ago or from now they are by this host's clock (`nowMs`; the times are the
 * server's, so the distance is as good as the two clocks agree).
 */
export function leaderMetadataLines(leader: LeaderInfo | null, backend: Pick<ElectionBackend, 'leaderMetadata'>, nowMs: number): string[] {
  const kept = leaderMetadataOf(backend);
  const lines: string[] = [];
  const time = (ms: number | undefined) => {
    if (ms === undefined || leader === null) return '-';
    const delta = Math.round(ms - nowMs);
    return `${new Date(ms).toISOString()} (${delta >= 0 ? `in ${delta} ms` : `${-delta} ms ago`})`;
  };
  if (kept.value) lines.push(`value:      ${leader?.value === undefined ? '(none)' : JSON.stringify(leader.value)}`);
  if (kept.since) lines.push(`since:      ${time(leader?.since)}`);
  if (kept.renewedAt) lines.push(`renewed:    ${time(leader?.renewedAt)}`);
  if (kept.leaseEndsAt) lines.push(`lease ends: ${time(leader?.leaseEndsAt)}`);
  if (kept.transitions) lines.push(`terms:      ${leader?.transitions ?? '-'}`);
  return lines;
}
