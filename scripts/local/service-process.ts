import { type ChildProcess, spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtModulePath } from './handler-modules.ts';

const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The environment variable naming a local build (scripts/local/local-build.ts) to run scripts from. */
export const LOCAL_BUILD_VARIABLE = 'LOCAL_RUNTIME_BUILD';

/**
 * Node's arguments to run a project script (relative to the project root): its built module when
 * LOCAL_RUNTIME_BUILD names a build (as a test run makes once), else its source through tsx, as
 * `npm start` and `npm run` do. `fromSources` always takes the source.
 */
export const scriptArguments = (script: string, options: { fromSources?: boolean } = {}): string[] => {
  const build = process.env[LOCAL_BUILD_VARIABLE];
  return build && !options.fromSources
    ? [builtModulePath(build, script)]
    : ['--import', 'tsx', join(PROJECT_ROOT, script)];
};

export const LOCAL_CLIENT = { clientId: 'it-client', clientSecret: 'it-client-secret-0123456789' };

export interface LocalService {
  baseUrl: string;
  /** The table's Unix socket (DYNAMODB_SOCKET for a tool that works on the service's table). */
  tableSocket: string;
  dataDir: string;
  /** The service process (its children: dynalite). */
  pid: number;
  output: () => string;
  /** SIGTERM, as Ctrl-C or a process manager would stop it. */
  stop(): Promise<void>;
  /** SIGKILL: no chance to clean up. */
  kill(): Promise<void>;
}

/** Everything a child prints, stdout and stderr together, as it arrives. */
export const collectOutput = (child: ChildProcess): (() => string) => {
  let output = '';
  const append = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  return () => output;
};

const exited = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
  });

/** tsx may keep its compiler cache in the temporary folder only if no other user can write there. */
const privateTemporaryFolder = (): boolean => {
  const folder = statSync(tmpdir());
  return folder.uid === process.getuid?.() && (folder.mode & 0o022) === 0;
};

/** `npm start`'s script in its own process, on free ports, the test client seeded, on `dataDir`. */
export const spawnService = (
  dataDir: string,
  env: Record<string, string> = {},
  options: { fromSources?: boolean } = {},
): ChildProcess =>
  spawn(process.execPath, scriptArguments('scripts/start.ts', options), {
    env: {
      ...process.env,
      // As npm start: no compiler cache in a shared temporary folder another user could own.
      ...(!privateTemporaryFolder() && { TSX_DISABLE_CACHE: '1' }),
      HOST: '127.0.0.1',
      PORT: '0',
      DATA_DIR: dataDir,
      LOCAL_CLIENT_ID: LOCAL_CLIENT.clientId,
      LOCAL_CLIENT_SECRET: LOCAL_CLIENT.clientSecret,
      ...env,
    },
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });

/**
 * Starts the service exactly as `npm start` does, in its own process, on free ports and a data
 * folder of its own (a fresh one unless `dataDir` is given, to restart on kept data).
 */
export const startLocalService = async (
  options: { dataDir?: string; env?: Record<string, string>; fromSources?: boolean } = {},
) => {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'credit-transfers-')));
  const child = spawnService(dataDir, options.env, { fromSources: options.fromSources ?? false });
  const output = collectOutput(child);
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start in time:\n${output()}`)), 60_000);
    const check = () => {
      const url = /listening on (http:\/\/[^\s]+)/.exec(output())?.[1];
      if (url) {
        clearTimeout(timer);
        resolve(url);
      }
    };
    child.stdout?.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited (${code}) before it was ready:\n${output()}`));
    });
  });
  const service: LocalService = {
    baseUrl,
    tableSocket: /DynamoDB \(dynalite\):\s+(\S+)/.exec(output())?.[1] ?? '',
    dataDir,
    pid: child.pid ?? 0,
    output,
    stop: async () => {
      child.kill('SIGTERM');
      await exited(child);
    },
    kill: async () => {
      child.kill('SIGKILL');
      await exited(child);
    },
  };
  return service;
};
