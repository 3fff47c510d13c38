/**
 * Array parameters as PostgreSQL array literals, built in one pass. node-postgres converts a JS
 * array element by element with several intermediate strings each; a renewal batch of thousands
 * of elections sends four arrays per interval, which made that conversion a large part of what a
 * busy leader allocates. The literal is still one bound parameter (`$1::text[]`), never SQL text.
 */

const TO_ESCAPE = /["\\]/g;

/** `{"a","b"}`: each element quoted, `"` and `\` escaped (PostgreSQL docs, "Array Value Input"). */
export function textArrayLiteral(values: readonly string[]): string {
  if (values.length === 0) return '{}';
  return `{"${values.map((v) => v.replace(TO_ESCAPE, '\\$&')).join('","')}"}`;
}

/** `{1,2}`: integers need no quoting. */
export function integerArrayLiteral(values: readonly number[]): string {
  return `{${values.join(',')}}`;
}
