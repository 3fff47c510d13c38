import { closestWord } from './closest-word';
import { ConclaveError } from './errors';
import { assertOptionsObject, describe } from './validation';

/** Every key of every member of `T`: `keyof` of a union (`{ pool } | { uri }`) keeps only the shared ones. */
export type OptionKey<T> = T extends unknown ? Extract<keyof T, string> : never;

/**
 * The keys an options type accepts, written once next to its interface:
 * `optionKeys<XOptions>({ leaseMs: true, … })`. The record must name every key of `T` and no
 * other, so the list cannot drift from the interface: TypeScript refuses it when one gains a key.
 */
export function optionKeys<T>(keys: Record<OptionKey<T>, true>): readonly OptionKey<T>[] {
  return Object.freeze(Object.keys(keys) as OptionKey<T>[]);
}

/**
 * Throws `INVALID_OPTIONS` unless `options` is a plain object whose own keys are all in `known`:
 * a misspelt option (`leaseMS`) would otherwise be ignored and its default used. The message names
 * the key and the known key it is close to, if any ("did you mean leaseMs?"), else the known keys.
 * Only the top level is checked: nested bags (a driver's own options) are passed through as they
 * are. Called before any I/O.
 */
export function assertOptionKeys(options: unknown, known: readonly string[], what: string, backend?: string): asserts options is object {
  assertOptionsObject(options, what, backend);
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const guess = closestWord(key, known);
    const hint = guess === undefined ? ` (known: ${known.join(', ')})` : `; did you mean ${guess}?`;
    throw new ConclaveError('INVALID_OPTIONS', `unknown option ${describe(key)} in ${what}${hint}`, { backend });
  }
}
