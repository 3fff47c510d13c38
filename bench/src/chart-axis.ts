/**
 * A log-scale axis for the chart: whole decades around the data, ticks at 1-2-5, labels in ms or s.
 */

export interface LogAxis {
  lo: number;
  hi: number;
  /** Pixel position of a positive value (clamped into the axis). */
  x(v: number): number;
  /** At 1-2-5 of each decade; `label` is empty where there is no room for one. */
  ticks: Array<{ value: number; x: number; label: string; major: boolean }>;
}

/** `1.5 ms`, `20 ms`, `2.9 s`: short, and the same text for the same value on every run. */
export function formatMs(v: number): string {
  if (Math.abs(v) >= 1000) return `${trim(v / 1000)} s`;
  return `${trim(v)} ms`;
}

function trim(v: number): string {
  const digits = Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2;
  return String(Number(v.toFixed(digits)));
}

/** Axis from x0 to x1 pixels over the decades that hold every positive value in `values`. */
export function logAxis(values: readonly number[], x0: number, x1: number): LogAxis {
  const positive = values.filter((v) => v > 0 && Number.isFinite(v));
  const min = positive.length ? Math.min(...positive) : 1;
  const max = positive.length ? Math.max(...positive) : 10;
  const lo = 10 ** Math.floor(Math.log10(min));
  let hi = 10 ** Math.ceil(Math.log10(max));
  if (hi <= lo) hi = lo * 10;
  const span = Math.log10(hi) - Math.log10(lo);
  const x = (v: number) => x0 + ((Math.log10(Math.min(hi, Math.max(lo, v))) - Math.log10(lo)) / span) * (x1 - x0);
  const ticks: LogAxis['ticks'] = [];
  for (let decade = lo; decade <= hi * 1.0001; decade *= 10) {
    for (const m of [1, 2, 5]) {
      const value = Number((decade * m).toPrecision(6));
      if (value > hi * 1.0001) break;
      // Over more than three decades the 2 and 5 labels would run into each other: grid lines only.
      ticks.push({ value, x: x(value), major: m === 1, label: m === 1 || span <= 3 ? formatMs(value) : '' });
    }
  }
  return { lo, hi, x, ticks };
}
