/** How many calls go into one query, and where a batch too large for one packet is cut. */

import type { CampaignRequest, RenewRequest } from '@conclave/core/spi';

/**
 * Largest batch of one turn: a process renews (or campaigns for) up to this many elections in one
 * query. Measured on MariaDB 10.11: a 10 000-row renewal UPDATE with its row-constructor IN plus
 * the read-back SELECT takes ≈ 60–110 ms and ≈ 1.7 MB of SQL with short names; a 10 000-row
 * campaign upsert ≈ 60–90 ms.
 */
export const MAX_BATCH = 10_000;
/**
 * Campaigns of one turn from which the batch reads before it writes (see the dialect's
 * flushCampaigns): a batch that large is mostly followers looking at leases held live by another
 * process, which a read answers without locking their rows. Smaller batches write at once.
 */
export const READ_FIRST_BATCH = 64;
/**
 * Largest query sent at once, bytes: below MySQL 5.7's default max_allowed_packet (4 MiB; MariaDB
 * 16 MiB, MySQL 8 64 MiB). A batch whose SQL would be larger (long election names or candidate
 * ids) is cut into several queries, sent at the same time.
 */
export const MAX_QUERY_BYTES = 3 * 1024 * 1024;

/** Bytes of a hex literal X'…' for a string. */
function hexBytes(value: string): number {
  return Buffer.byteLength(value, 'utf8') * 2 + 3;
}

/** Upper estimate of the SQL one campaign adds to a batch (VALUES row + read-back name). */
export function campaignBytes(r: CampaignRequest): number {
  return 2 * hexBytes(r.election) + hexBytes(r.candidateId) + (r.value === undefined ? 0 : 2 * hexBytes(r.value)) + 96;
}

/** Upper estimate of the SQL one renewal adds (name IN, row-constructor tuple, read-back name). */
export function renewBytes(r: RenewRequest): number {
  return 3 * hexBytes(r.election) + hexBytes(r.candidateId) + 32;
}

/**
 * Runs `flush` on the whole batch, or, if its SQL would pass MAX_QUERY_BYTES, on consecutive
 * chunks that each fit (sent at the same time), and joins the results in order.
 */
export async function bySize<R, T>(requests: R[], size: (r: R) => number, flush: (chunk: R[]) => Promise<T[]>): Promise<T[]> {
  const chunks: R[][] = [];
  let chunk: R[] = [];
  let bytes = 1024;
  for (const r of requests) {
    const b = size(r);
    if (chunk.length > 0 && bytes + b > MAX_QUERY_BYTES) {
      chunks.push(chunk);
      chunk = [];
      bytes = 1024;
    }
    chunk.push(r);
    bytes += b;
  }
  if (chunk.length > 0) chunks.push(chunk);
  if (chunks.length <= 1) return flush(requests);
  return (await Promise.all(chunks.map(flush))).flat();
}
