import { AsyncLocalStorage } from 'node:async_hooks';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

/**
 * What Lambda would bill for the local runtime's invocations, for `npm run bench`: per function
 * (named by its handler entry, as the stack names each function's role), the invocations, their
 * duration rounded up to the millisecond as Lambda bills it, and the bytes each wrote to its log.
 * Off unless INVOCATION_METER_DIR is set; then on SIGUSR2 the figures so far are written to
 * `$INVOCATION_METER_DIR/invocations-<pid>.json`.
 */
export interface FunctionFigures {
  invocations: number;
  billedMs: number;
  logBytes: number;
  /** Each invocation's billed milliseconds, in order (the bench takes their median: a busy machine's outliers are not Lambda's). */
  durations: number[];
  /** Billed milliseconds of work done within its invocations but timed apart (a webhook's first attempt). */
  added: number[];
}

const directory = process.env.INVOCATION_METER_DIR;
const figures: Record<string, FunctionFigures> = {};
const current = new AsyncLocalStorage<string>();

const of = (entry: string): FunctionFigures => {
  figures[entry] ??= { invocations: 0, billedMs: 0, logBytes: 0, durations: [], added: [] };
  return figures[entry];
};

if (directory) {
  // A log line belongs to the invocation whose context wrote it.
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      const entry = current.getStore();
      if (entry !== undefined && (typeof chunk === 'string' || chunk instanceof Uint8Array))
        of(entry).logBytes += Buffer.byteLength(chunk);
      return write(chunk, ...rest);
    }) as typeof stream.write;
  }
  process.on('SIGUSR2', () =>
    writeFileSync(join(directory, `invocations-${process.pid}.json`), JSON.stringify(figures)),
  );
}

/** Runs one invocation of the function `entry`, counted when metering is on. */
export const metered = <T>(entry: string | undefined, invocation: () => T): T => {
  if (!directory || entry === undefined) return invocation();
  const started = performance.now();
  const count = () => {
    const function_ = of(entry);
    const billed = Math.max(1, Math.ceil(performance.now() - started));
    function_.invocations += 1;
    function_.billedMs += billed;
    function_.durations.push(billed);
  };
  const result = current.run(entry, invocation);
  if (result instanceof Promise) return result.finally(count) as T;
  count();
  return result;
};

/** Work billed to `entry` that is no invocation of its own (an attempt made within another one). */
export const addBilledDuration = (entry: string, milliseconds: number): void => {
  if (!directory) return;
  const function_ = of(entry);
  const billed = Math.max(1, Math.ceil(milliseconds));
  function_.billedMs += billed;
  function_.added.push(billed);
};
