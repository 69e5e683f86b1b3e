/**
 * The documentation test: every shell block of README.md and docs/*.md meant to be run is run,
 * so a documented command that no longer works fails the build.
 *
 * Conventions for fenced code blocks (docs/decisions.md, "README and guides (issue 19)"):
 * - A block whose info string is `sh` or `bash` is run, unless the line right before it (blank
 *   lines aside) is `<!-- doc-test: skip (reason) -->`. Skipped: the commands that start the
 *   service or the tests (`npm ci && npm start`, `npm ci && npm test`: this test starts the
 *   service itself), and commands for a real AWS account (`cdk deploy`, `aws ...`).
 * - A runnable block's `curl` carries `--fail-with-body` (or `-f`/`--fail`): without it an
 *   answer of 401 or 500 would end the block with 0. A test checks this.
 * - Any other info string (`text`, `console`, `ts`, `json`, `cron`, none) is never run: output
 *   samples, code and queries.
 * - The blocks of one file run in order, each by its own `bash` with `set -e -o pipefail`, the
 *   variables and functions a block leaves carried into the next (so a guide may set `TOKEN`
 *   once). Each block has BLOCK_TIMEOUT_MS; whatever it leaves running is killed when it ends.
 * - DOC_TEST_VERBOSE=1 prints every block's output.
 * - Every file starts in a fresh temporary working folder holding a copy of the project's
 *   top-level entries (examples/, package.json, scripts, ...; node_modules linked), so
 *   `npm run ...` and `-d @examples/transfer.json` work as at the project's root, and files a
 *   block writes stay in the temporary folder.
 * - The environment: BASE (the started service's URL), CLIENT_ID and CLIENT_SECRET (its seeded
 *   client, deliberately not `npm start`'s default one, so a block that ignores the variables
 *   fails), DATA_DIR (the service's data folder, for `npm run clients`/`npm run keys`),
 *   RECEIVER_PORT (a free port, for a webhook receiver a block starts). Blocks
 *   use `${BASE:-http://127.0.0.1:3000}` and the like, so they run as shown against `npm start`.
 * - Every `cdk deploy`/`cdk synth` line of a shell block, skipped or not, is synthesized in-process
 *   with its context and the account and region the CLI would hand the app, and fails on any
 *   cdk-nag or cfn-guard finding (test/docs/deploy-commands.ts: how `...` and `<...>` are read).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { cp, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYNTH_TIMEOUT_MS, synthesize } from '../infra/synth.ts';
import { LOCAL_CLIENT, type LocalService, startLocalService } from '../integration/support/local-service.ts';
import { DEPLOY_GUIDE, deploySyntheses } from './deploy-commands.ts';
import { fencedBlocks, type ShellBlock } from './markdown.ts';

const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BLOCK_TIMEOUT_MS = 90_000;
const RUNNABLE = new Set(['sh', 'bash']);

const runnableBlocks = (markdown: string): ShellBlock[] =>
  fencedBlocks(markdown)
    .filter((block) => RUNNABLE.has(block.info) && !block.skipped)
    .map(({ line, code }) => ({ line, code }));

const documents = (): string[] => [
  'README.md',
  ...readdirSync(join(PROJECT_ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

/** Bash that restores what the previous block left, runs the block, and saves what it leaves. */
const script = (block: string, stateFile: string): string => `
__doc_save() {
  local __doc_name
  for __doc_name in $(compgen -v); do
    case $__doc_name in
      BASH*|EUID|PPID|SHELLOPTS|UID|PWD|OLDPWD|SHLVL|_|RANDOM|SRANDOM|LINENO|SECONDS|FUNCNAME|GROUPS|DIRSTACK|PIPESTATUS|HISTCMD|EPOCHREALTIME|EPOCHSECONDS|COLUMNS|LINES|IFS|OPTIND|OPTERR|OPTARG|PS1|PS2|PS4|HOSTNAME|HOSTTYPE|MACHTYPE|OSTYPE|__doc_*) ;;
      *) declare -p "$__doc_name" ;;
    esac
  done
  declare -f | sed '/^__doc_save ()/,/^}/d'
}
if [ -f ${JSON.stringify(stateFile)} ]; then source ${JSON.stringify(stateFile)}; fi
trap '__doc_status=$?; __doc_save > ${JSON.stringify(stateFile)} 2>/dev/null; exit $__doc_status' EXIT
set -e -o pipefail
${block}
`;

interface BlockRun {
  exitCode: number | null;
  timedOut: boolean;
  output: string;
}

const runBlock = async (
  code: string,
  options: { cwd: string; env: NodeJS.ProcessEnv; stateFile: string; scriptFile: string },
): Promise<BlockRun> => {
  await writeFile(options.scriptFile, script(code, options.stateFile));
  // Its own process group, so whatever the block leaves running is ended with it.
  const child: ChildProcess = spawn('bash', [options.scriptFile], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const killGroup = () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // the group is gone already
    }
  };
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup();
  }, BLOCK_TIMEOUT_MS);
  const exitCode = await new Promise<number | null>((resolveExit) => child.once('exit', resolveExit));
  clearTimeout(timer);
  killGroup();
  return { exitCode, timedOut, output };
};

/**
 * A copy of the project's root (node_modules linked, tests and dot-folders left out): `npm run`
 * scripts run as at the root, and what a block writes stays out of the project. A copy, not
 * links: a script that checks whether it is the main module compares real paths.
 */
const workingFolder = async (): Promise<string> => {
  const folder = await mkdtemp(join(tmpdir(), 'credit-transfers-docs-'));
  for (const entry of readdirSync(PROJECT_ROOT)) {
    if (entry.startsWith('.') || entry === 'test') continue;
    if (entry === 'node_modules') await symlink(join(PROJECT_ROOT, entry), join(folder, entry));
    // With their times: the built CLI (client/dist) stays as fresh as its sources, not rebuilt in the copy.
    else
      await cp(join(PROJECT_ROOT, entry), join(folder, entry), { recursive: true, preserveTimestamps: true });
  }
  return folder;
};

/** A port nothing listens on now, for a receiver a block starts. */
const freePort = (): Promise<number> =>
  new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolvePort(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });

const blockEnvironment = async (service: LocalService): Promise<NodeJS.ProcessEnv> => {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) =>
        !name.startsWith('CREDIT_TRANSFERS_') &&
        !name.startsWith('npm_lifecycle_') &&
        !name.startsWith('npm_package_'),
    ),
  );
  return {
    ...inherited,
    // The project's Node first, as `npm run` would have it.
    PATH: [join(PROJECT_ROOT, 'node_modules/.bin'), dirname(process.execPath), process.env.PATH ?? ''].join(
      ':',
    ),
    BASE: service.baseUrl,
    CLIENT_ID: LOCAL_CLIENT.clientId,
    CLIENT_SECRET: LOCAL_CLIENT.clientSecret,
    DATA_DIR: service.dataDir,
    RECEIVER_PORT: String(await freePort()),
  };
};

describe('documentation', () => {
  it('links every guide from the README, and every relative link points at a file', () => {
    const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
    for (const document of documents().filter((name) => name !== 'README.md')) {
      expect(readme, `README.md links ${document}`).toContain(`](${document})`);
    }
    for (const document of documents()) {
      const text = readFileSync(join(PROJECT_ROOT, document), 'utf8');
      for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)) {
        if (target === undefined || /^[a-z]+:/.test(target)) continue;
        expect(
          existsSync(resolve(PROJECT_ROOT, dirname(document), target)),
          `${document} links ${target}`,
        ).toBe(true);
      }
    }
  });

  it('has every curl of a runnable block fail on an HTTP error', () => {
    for (const document of documents()) {
      for (const block of runnableBlocks(readFileSync(join(PROJECT_ROOT, document), 'utf8'))) {
        const commands = block.code.replace(/\\\n/g, ' ').split('\n');
        for (const command of commands.filter((line) => /(^|[\s|;&(])curl\s/.test(line))) {
          expect(command, `${document}:${block.line}`).toMatch(
            /\s(--fail-with-body|--fail|-f|-[a-zA-Z]*f[a-zA-Z]*)(\s|$)/,
          );
        }
      }
    }
  });

  it('reads runnable and skipped blocks as the convention says', () => {
    const markdown = [
      '```sh',
      'echo run',
      '```',
      '<!-- doc-test: skip (starts the service) -->',
      '',
      '```sh',
      'npm start',
      '```',
      '```text',
      'output',
      '```',
      '1. A step:',
      '',
      '   ```bash',
      '   echo indented',
      '   ```',
    ].join('\n');
    expect(runnableBlocks(markdown)).toEqual([
      { line: 1, code: 'echo run' },
      { line: 14, code: 'echo indented' },
    ]);
  });

  /**
   * Every `cdk deploy`/`cdk synth` of the guides' blocks synthesizes as the CLI would run it
   * (test/docs/deploy-commands.ts says how `...` and `<...>` are read), cdk-nag and cfn-guard
   * included: the prod stage with its account and region known, as on every real deploy, and
   * within CloudFormation's 500 resources a stack.
   */
  describe('deploy commands synthesize as written', () => {
    const { syntheses, unreadable } = deploySyntheses(
      new Map(documents().map((document) => [document, readFileSync(join(PROJECT_ROOT, document), 'utf8')])),
    );

    it('reads every one, among them the stages of the deploying guide', () => {
      expect(unreadable).toEqual([]);
      const deploying = syntheses.filter((s) => s.commands.some((c) => c.startsWith(`${DEPLOY_GUIDE}:`)));
      expect(deploying.map((s) => s.context.stage)).toEqual(expect.arrayContaining(['dev', 'prod']));
    });

    it.each(syntheses.map((synthesis) => [synthesis.commands.join(', '), synthesis] as const))(
      '%s',
      { timeout: SYNTH_TIMEOUT_MS },
      (_, { context, environment, stacks }) => {
        const stage = synthesize(context, environment);
        expect(stage.nagFindings, 'cdk-nag findings').toEqual([]);
        expect(stage.guardFindings, 'cfn-guard findings').toEqual([]);
        const made = [stage.stackName, ...(stage.recoveryTemplate ? [`${stage.stackName}-recovery`] : [])];
        for (const name of stacks) expect(made, `the stack ${name}`).toContain(name);
        // CloudFormation refuses a template of more than 500 resources: the deploy would fail.
        for (const template of [stage.template, stage.recoveryTemplate]) {
          const resources = Object.keys(template?.toJSON().Resources ?? {}).length;
          expect(resources, 'CloudFormation resources in one stack').toBeLessThanOrEqual(500);
        }
      },
    );
  });

  describe('shell blocks run against a local service', () => {
    let service: LocalService;
    const folders: string[] = [];

    beforeAll(async () => {
      service = await startLocalService();
    });

    afterAll(async () => {
      await service?.stop();
      for (const folder of folders) await rm(folder, { recursive: true, force: true });
    });

    const withBlocks = documents().filter(
      (document) => runnableBlocks(readFileSync(join(PROJECT_ROOT, document), 'utf8')).length > 0,
    );

    it.each(withBlocks)('%s', { timeout: 15 * 60_000 }, async (document) => {
      const blocks = runnableBlocks(readFileSync(join(PROJECT_ROOT, document), 'utf8'));
      const cwd = await workingFolder();
      folders.push(cwd);
      const env = await blockEnvironment(service);
      const stateFile = join(cwd, '.doc-test-state');
      const scriptFile = join(cwd, '.doc-test-block.sh');
      for (const block of blocks) {
        const run = await runBlock(block.code, { cwd, env, stateFile, scriptFile });
        if (process.env.DOC_TEST_VERBOSE) console.log(`${document}:${block.line}\n${run.output}`);
        if (run.exitCode !== 0) {
          throw new Error(
            `${document}:${block.line}: the block ${run.timedOut ? `did not end within ${BLOCK_TIMEOUT_MS / 1000} s` : `exited with ${run.exitCode}`}\n` +
              `--- block ---\n${block.code}\n--- output ---\n${run.output}`,
          );
        }
      }
    });
  });
});
