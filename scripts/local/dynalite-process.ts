import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface DynaliteProcess {
  /** The Unix socket it listens on. */
  socket: string;
  child: ChildProcess;
  /** What it printed to stderr (why it stopped, when it did). */
  errors: () => string;
}

/**
 * Starts dynalite as its own process (it serves far more requests than in-process), persisted
 * in LevelDB under `path`, listening on the Unix socket `socket` (never on a TCP port); the
 * promise settles once it listens.
 */
export const startDynalite = (options: { socket: string; path: string }): Promise<DynaliteProcess> =>
  new Promise((resolve, reject) => {
    const server = fileURLToPath(new URL('./dynalite-server.mjs', import.meta.url));
    const child = spawn(process.execPath, [server, options.socket, options.path], {
      stdio: ['pipe', 'pipe', 'pipe'],
      // A fixed mmap threshold: glibc otherwise raises it each time a large buffer is freed and
      // serves later ones from its arenas, which seldom give memory back (docs/benchmarks.md).
      env: { ...process.env, MALLOC_MMAP_THRESHOLD_: process.env.MALLOC_MMAP_THRESHOLD_ ?? '131072' },
    });
    let output = '';
    let errors = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('listening at: ')) {
        child.stdout?.off('data', onData);
        resolve({ socket: options.socket, child, errors: () => errors });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      errors = `${errors}${chunk.toString()}`.slice(-4000);
    });
    child.once('error', reject);
    child.once('exit', (code) =>
      reject(new Error(`dynalite exited (${code}) before listening: ${output.trim()}`)),
    );
  });
