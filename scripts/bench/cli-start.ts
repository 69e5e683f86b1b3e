import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ensureBuilt } from '../../client/scripts/built-cli.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const NPM_CLI = process.env.npm_execpath;

export interface CliStartFigure {
  name: string;
  command: string;
  /** Median wall time to `--help` printed and the process gone, in milliseconds. */
  medianMs: number;
  minMs: number;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

const timed = (command: string, args: string[]): number => {
  const started = performance.now();
  const result = spawnSync(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const elapsed = performance.now() - started;
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${result.stderr}`);
  return elapsed;
};

/**
 * The CLI's start: a fresh process printing `--help`, from the built JavaScript (what `npm run cli`
 * runs, its staleness check included) and from the TypeScript sources through the tsx loader
 * (what it ran before), side by side; and `npm run -s cli`, which adds npm's own start. Node
 * starting alone is the floor, so that a loaded machine shows as such.
 */
export const benchCliStart = ({ runs }: { runs: number }): CliStartFigure[] => {
  ensureBuilt();
  const node = process.execPath;
  const cases: { name: string; command: string; run: () => number }[] = [
    {
      // The floor on this machine at this moment: what any Node process pays to start and exit.
      name: 'Node alone (floor)',
      command: 'node -e 0',
      run: () => timed(node, ['-e', '0']),
    },
    {
      name: 'built JavaScript',
      command: 'node client/scripts/cli.mjs --help',
      run: () => timed(node, ['client/scripts/cli.mjs', '--help']),
    },
    {
      name: 'TypeScript loader (tsx)',
      command: 'node --import tsx client/src/cli.ts --help',
      run: () => timed(node, ['--import', 'tsx', 'client/src/cli.ts', '--help']),
    },
    ...(NPM_CLI === undefined
      ? []
      : [
          {
            name: 'npm run -s cli (built JavaScript)',
            command: 'npm run -s cli -- --help',
            run: () => timed(node, [NPM_CLI, 'run', '-s', 'cli', '--', '--help']),
          },
        ]),
  ];
  return cases.map(({ name, command, run }) => {
    run(); // warms the file cache: every case is measured warm
    const times = Array.from({ length: runs }, run);
    return { name, command, medianMs: median(times), minMs: Math.min(...times) };
  });
};
