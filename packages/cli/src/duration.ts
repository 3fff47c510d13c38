const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/** The longest duration a Node timer can wait, ms (about 24.8 days). */
const MAX_MS = 2_147_483_647;

/**
 * Parses a duration flag: `0`, or a number with a unit — `500ms`, `30s`, `1.5m`, `2h` — into
 * whole milliseconds. A bare number other than 0 is refused: `30` could mean seconds or ms.
 * Returns an error message instead of throwing, for the caller to wrap.
 */
export function parseDuration(text: string): { ms: number } | { error: string } {
  if (text === '0') return { ms: 0 };
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(text);
  if (!match) {
    return /^\d+(\.\d+)?$/.test(text)
      ? { error: `needs a unit, as in ${text}s or ${text}ms` }
      : { error: 'must be a duration such as 0, 500ms, 30s, 2m or 1h' };
  }
  const ms = Math.round(Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]);
  if (ms > MAX_MS) return { error: 'is too long (at most 24 days)' };
  return { ms };
}
