/**
 * Each function's memory in MB, by its handler entry: the one place it is set. Chosen by
 * `npm run bench -- memory` (scripts/bench/memory.ts), which measures every API and workflow
 * function at several sizes and prints the cheapest size whose warm duration is within its bound
 * of the fastest, and whether this table agrees (docs/decisions.md, "Memory and cold start").
 */
export const DEFAULT_MEMORY_MB = 1024;

export const FUNCTION_MEMORY_MB: Readonly<Record<string, number>> = {};

/** The memory of the function whose handler is `entry`. */
export const memoryOf = (entry: string): number => FUNCTION_MEMORY_MB[entry] ?? DEFAULT_MEMORY_MB;
