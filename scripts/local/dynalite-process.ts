import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface DynaliteProcess {
  endpoint: string;
  child: ChildProcess;
  /** What it printed to stderr (why it stopped, when it did). */
  errors: () => string;
}

/**
 * Starts dynalite as its own process (it serves far more requests than in-process), persisted
 * in LevelDB under `path`. Port 0 picks a free port; the promise settles once it listens.
 */
export const startDynalite = (options: {
  host: string;
  port: number;
  path: string;
}): Promise<DynaliteProcess> =>
  new Promise((resolve, reject) => {
    const server = fileURLToPath(new URL('./dynalite-server.mjs', import.meta.url));
    const child = spawn(process.execPath, [server, options.host, String(options.port), options.path], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    let errors = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const port = /listening at: https?:\/\/[^:]+:(\d+)/.exec(output)?.[1];
      if (port !== undefined) {
        child.stdout?.off('data', onData);
        resolve({ endpoint: `http://${options.host}:${port}`, child, errors: () => errors });
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
