/**
 * When the local API last received a request (Date.now() ms, 0 before the first), in memory shared
 * with the workflow thread: it runs few Task states while clients are being served and many once
 * they have gone quiet.
 */
let lastRequestAt = new Float64Array(new SharedArrayBuffer(Float64Array.BYTES_PER_ELEMENT));

/** Called by the local HTTP server on every request. */
export const markApiRequest = (): void => {
  lastRequestAt[0] = Date.now();
};

/** Milliseconds since the last request (very many if none arrived yet). */
export const msSinceApiRequest = (): number => Date.now() - (lastRequestAt[0] ?? 0);

/** The shared memory, for the workflow thread. */
export const apiActivityMemory = (): SharedArrayBuffer => lastRequestAt.buffer as SharedArrayBuffer;

/** In the workflow thread: reads the API's activity from the memory the server thread writes. */
export const useApiActivityMemory = (memory: SharedArrayBuffer): void => {
  lastRequestAt = new Float64Array(memory);
};
