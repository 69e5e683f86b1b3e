/** Runs `task` over `items`, at most `concurrency` at a time, in order of index. */
export const inPool = async <T>(
  items: readonly T[],
  concurrency: number,
  task: (item: T, index: number) => Promise<void>,
): Promise<void> => {
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < items.length; index = next++) await task(items[index] as T, index);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
};
