import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../client/src/cli.ts', import.meta.url));
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
  const preload = (options.preload ?? []).flatMap((path) => ['--import', path]);
  const child = spawn(process.execPath, ['--import', 'tsx', ...preload, CLI, ...args], {
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
  [
    process.execPath,
    '--import',
    'tsx',
    ...(options.preload ?? []).flatMap((path) => ['--import', path]),
    CLI,
    ...args,
  ]
    .map((word) => `'${word.replaceAll("'", `'\\''`)}'`)
    .join(' ');

export { ROOT, withoutCliSettings };
