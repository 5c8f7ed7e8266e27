/**
 * A binary min-heap over a plain number array (callers pack their keys into one number so the
 * heap needs no comparator): bin packing's free bins, piece BPE's pairs.
 */
export function heapPush(heap: number[], value: number): void {
  heap.push(value);
  let i = heap.length - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if ((heap[parent] as number) <= value) break;
    heap[i] = heap[parent] as number;
    i = parent;
  }
  heap[i] = value;
}

/** Pops the smallest value; the heap must not be empty. */
export function heapPop(heap: number[]): number {
  const top = heap[0] as number;
  const last = heap.pop() as number;
  if (heap.length === 0) return top;
  let i = 0;
  for (;;) {
    const left = 2 * i + 1;
    if (left >= heap.length) break;
    const right = left + 1;
    const child = right < heap.length && (heap[right] as number) < (heap[left] as number) ? right : left;
    if ((heap[child] as number) >= last) break;
    heap[i] = heap[child] as number;
    i = child;
  }
  heap[i] = last;
  return top;
}
