/** The `watch` subscriptions of each candidate (key: election + candidate id), and waking them. */
export class CandidateWatchers {
  private readonly listeners = new Map<string, Set<() => void>>();

  /** Subscribes `onChange` to the candidate `k`; returns the unsubscribe function. */
  add(k: string, onChange: () => void): () => void {
    let set = this.listeners.get(k);
    if (!set) {
      set = new Set();
      this.listeners.set(k, set);
    }
    // Each subscription gets its own function so one candidate can watch twice.
    const listener = () => onChange();
    set.add(listener);
    return () => {
      const current = this.listeners.get(k);
      current?.delete(listener);
      if (current?.size === 0) this.listeners.delete(k);
    };
  }

  notify(k: string): void {
    const set = this.listeners.get(k);
    if (!set) return;
    // Delivered on a later turn so that no caller re-enters itself.
    for (const listener of [...set]) setImmediate(listener);
  }

  notifyAll(): void {
    for (const k of this.listeners.keys()) this.notify(k);
  }

  clear(): void {
    this.listeners.clear();
  }
}
