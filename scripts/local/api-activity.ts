import { performance } from 'node:perf_hooks';

/**
 * When the local API last received a request. The in-process workflow runner reads it to run few
 * Task states while clients are being served and many once they have gone quiet.
 */
let lastRequestAt = Number.NEGATIVE_INFINITY;

/** Called by the local HTTP server on every request. */
export const markApiRequest = (): void => {
  lastRequestAt = performance.now();
};

/** Milliseconds since the last request (Infinity if none arrived yet). */
export const msSinceApiRequest = (): number => performance.now() - lastRequestAt;
