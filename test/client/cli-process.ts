import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** What `npm run cli` runs: the built CLI (client/dist), built by the suite's global setup. */
const CLI = fileURLToPath(new URL('../../client/scripts/cli.mjs', import.meta.url));
/** Preload that freezes the CLI at a chosen moment (see stall.ts). */
export const STALL = fileURLToPath(new URL('./stall.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The CLI as a real child process (as `npm run cli` runs it), stdout and stderr piped. */
export const startCli = (
  args: string[],
  env: Record<string, string | undefined>,
  options: { preload?: string[] } = {},
) => {
  const child = spawn(process.execPath, [...preloads(options.preload), CLI, ...args], {
    cwd: ROOT,
    env: { ...withoutCliSettings(process.env), ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const done = new Promise<CliResult>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child: child as ChildProcess, done, stdout: () => stdout, stderr: () => stderr };
};

/** Preloads are TypeScript: they, and only they, bring the TypeScript loader. */
const preloads = (paths: string[] = []) =>
  paths.length === 0 ? [] : ['--import', 'tsx', ...paths.flatMap((path) => ['--import', path])];

export const runCli = (args: string[], env: Record<string, string | undefined>, input?: string) => {
  const run = startCli(args, env);
  run.child.stdin?.end(input);
  return run.done;
};

const withoutCliSettings = (env: NodeJS.ProcessEnv) =>
  Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('CREDIT_TRANSFERS_')));

export const cliEnv = (baseUrl: string, client: { clientId: string; clientSecret: string }) => ({
  CREDIT_TRANSFERS_API_URL: baseUrl,
  CREDIT_TRANSFERS_CLIENT_ID: client.clientId,
  CREDIT_TRANSFERS_CLIENT_SECRET: client.clientSecret,
});

/** The command line that runs the CLI as `startCli` does, for a shell. */
export const cliCommand = (args: string[], options: { preload?: string[] } = {}) =>
  [process.execPath, ...preloads(options.preload), CLI, ...args]
    .map((word) => `'${word.replaceAll("'", `'\\''`)}'`)
    .join(' ');

export { ROOT, withoutCliSettings };
