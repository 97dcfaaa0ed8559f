/**
 * What falls due by an account's clock (expiries, delayed CVUs, old idempotency keys), ordered by time: a binary
 * min-heap, so finding and taking the next item costs O(log n) however many payments wait. Items are never removed
 * early; whoever takes one checks it is still due (a cancelled payment's expiry is simply skipped). Items due at
 * the same time come out in the order they were put in.
 */
export class DueQueue {
  private heap: { at: number; key: string; n: number }[] = [];
  private pushed = 0;

  /** The queue as JSON (a store keeps it), read back by `from`. */
  toJSON(): StoredQueue {
    return { pushed: this.pushed, heap: this.heap.map(({ at, key, n }) => [at, key, n]) };
  }

  static from(stored: StoredQueue): DueQueue {
    const queue = new DueQueue();
    queue.pushed = stored.pushed;
    queue.heap = stored.heap.map(([at, key, n]) => ({ at, key, n }));
    return queue;
  }

  push(at: number, key: string): void {
    const heap = this.heap;
    heap.push({ at, key, n: this.pushed++ });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[parent], heap[i]] = [heap[i]!, heap[parent]!];
      i = parent;
    }
  }

  peek(): { at: number; key: string } | undefined {
    return this.heap[0];
  }

  pop(): { at: number; key: string } | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length > 0 && last) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let smallest = i;
        if (left < heap.length && before(heap[left]!, heap[smallest]!)) smallest = left;
        if (right < heap.length && before(heap[right]!, heap[smallest]!)) smallest = right;
        if (smallest === i) break;
        [heap[smallest], heap[i]] = [heap[i]!, heap[smallest]!];
        i = smallest;
      }
    }
    return top;
  }
}

export interface StoredQueue {
  pushed: number;
  heap: [number, string, number][];
}

const before = (a: { at: number; n: number }, b: { at: number; n: number }): boolean => a.at < b.at || (a.at === b.at && a.n < b.n);
