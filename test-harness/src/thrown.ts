/**
 * What `fn` throws, for checks on the error itself (its code, its message); fails when `fn`
 * returns. Typed as an Error for those checks; a thrown non-Error comes back as it is.
 */
export function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a throw');
}
