import type { CliEnvironment } from '../../lib/credit-transfer-app.ts';
import { fencedBlocks } from './markdown.ts';

/**
 * The guides' `cdk deploy` and `cdk synth` commands, read from their shell blocks (skipped or
 * not) as the app would receive them (docs/decisions.md, "Deploy commands in the guides"):
 * - `...` standing for the context (a word of its own, or `...the context without X...`) is the
 *   stage's complete command in docs/operations.md: its values, under those written.
 * - A value written as `...` or `<...>` whole is that command's value of the same name; inside a
 *   value, `<account>` is the command's account and any other `<a name>` reads `a-name`.
 * - `$NAME` is the value a `NAME=value` before it in its block gives.
 * - The account is `-c account` or TEST_ACCOUNT (the CLI's, from the credentials); the region is
 *   the line's `AWS_REGION=` or DEFAULT_REGION (the profile's).
 */
export const DEPLOY_GUIDE = 'docs/operations.md';
export const TEST_ACCOUNT = '123456789012';
export const DEFAULT_REGION = 'eu-west-1';

const COMMAND = /\bcdk\s+(deploy|synth)\b/;
/** `...` for the rest of the context, or `...some words...` saying which rest. */
const REST = /\.\.\.[A-Za-z][^.]*\.\.\./;
const PLACEHOLDER = /^(\.\.\.|<[^>]*>)$/;
const DEFAULT_STAGE = 'dev';

interface WrittenCommand {
  /** `file:line` of its first line. */
  readonly where: string;
  readonly context: Record<string, string>;
  /** Its `...`: the stage's other values as before. */
  readonly continued: boolean;
  readonly stacks: string[];
  readonly region: string | undefined;
}

/** What one synthesis checks: a context and environment, and the commands that come to it. */
export interface Synthesis {
  readonly context: Record<string, string>;
  readonly environment: Required<{ [K in keyof CliEnvironment]: string }>;
  /** Stacks the commands name (beside `--all`): each must be one the app makes. */
  readonly stacks: string[];
  readonly commands: string[];
}

const expand = (text: string, variables: Map<string, string>, where: string): string =>
  text.replace(/\$\{?([A-Za-z_]\w*)\}?/g, (_, name: string) => {
    const value = variables.get(name);
    if (value === undefined)
      throw new Error(`${where}: $${name} is set by no NAME=value before it in its block`);
    return value;
  });

/** Each `cdk deploy`/`cdk synth` line of one shell block, continuation lines joined. */
const commandsOf = (code: string, firstLine: number, file: string): WrittenCommand[] => {
  const commands: WrittenCommand[] = [];
  const variables = new Map<string, string>();
  const lines = code.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const where = `${file}:${firstLine + index}`;
    let line = lines[index] ?? '';
    while (line.endsWith('\\') && index + 1 < lines.length) line = `${line.slice(0, -1)} ${lines[++index]}`;
    line = line.replace(/(^|\s)#.*$/, '');
    if (!COMMAND.test(line)) {
      // Plain assignments only; one built from what the block cannot know here is left unset.
      for (const [, name = '', value = ''] of line.matchAll(/(?:^|;)\s*([A-Za-z_]\w*)=(\S*?)\s*(?=;|$)/g)) {
        try {
          variables.set(name, expand(value, variables, where));
        } catch {
          variables.delete(name);
        }
      }
      continue;
    }
    const words =
      expand(line, variables, where).match(new RegExp(`${REST.source}|(?:<[^>]*>|\\S)+`, 'g')) ?? [];
    const cdk = words.findIndex((word, at) => word === 'cdk' && /^(deploy|synth)$/.test(words[at + 1] ?? ''));
    if (cdk === -1) continue;
    const assigned = new Map(
      words.slice(0, cdk).flatMap((word) => {
        const [name, ...value] = word.split('=');
        return value.length > 0 ? [[name, value.join('=')] as const] : [];
      }),
    );
    const context: Record<string, string> = {};
    const stacks: string[] = [];
    let continued = false;
    for (let at = cdk + 2; at < words.length; at++) {
      const word = words[at] ?? '';
      if (word === '-c' || word === '--context') {
        const [name = '', ...value] = (words[++at] ?? '').split('=');
        context[name] = value.join('=');
      } else if (word === '...' || REST.test(word)) continued = true;
      else if (!word.startsWith('-')) stacks.push(word);
    }
    commands.push({ where, context, continued, stacks, region: assigned.get('AWS_REGION') });
  }
  return commands;
};

const writtenCommands = (documents: ReadonlyMap<string, string>): WrittenCommand[] =>
  [...documents].flatMap(([file, markdown]) =>
    fencedBlocks(markdown).flatMap((block) => commandsOf(block.code, block.line + 1, file)),
  );

const stageOf = (command: WrittenCommand): string => command.context.stage ?? DEFAULT_STAGE;

const complete = (command: WrittenCommand): boolean =>
  !command.continued && !Object.values(command.context).some((value) => PLACEHOLDER.test(value));

const resolve = (command: WrittenCommand, base: WrittenCommand | undefined): Synthesis => {
  const needsBase = !complete(command);
  if (needsBase && base === undefined)
    throw new Error(`${command.where}: no complete command of stage ${stageOf(command)} in ${DEPLOY_GUIDE}`);
  const written = Object.entries({ ...(command.continued && base?.context), ...command.context }).map(
    ([name, value]): [string, string] => {
      if (!PLACEHOLDER.test(value)) return [name, value];
      const before = base?.context[name];
      if (before === undefined)
        throw new Error(`${command.where}: ${name}=${value}, but ${base?.where} sets no ${name}`);
      return [name, before];
    },
  );
  const account = Object.fromEntries(written).account ?? TEST_ACCOUNT;
  const context = Object.fromEntries(
    written
      .map(([name, value]): [string, string] => [
        name,
        value
          .replaceAll('<account>', account)
          .replace(/<([^>]*)>/g, (_, words: string) => words.trim().split(/\s+/).join('-')),
      ])
      .sort(([a], [b]) => a.localeCompare(b)),
  );
  return {
    context,
    environment: { account, region: command.region ?? DEFAULT_REGION },
    stacks: command.stacks,
    commands: [command.where],
  };
};

/**
 * Every deploy command of the documents (name to Markdown), one synthesis per distinct context
 * and environment; a command that cannot be read is in `unreadable` with its reason.
 */
export const deploySyntheses = (
  documents: ReadonlyMap<string, string>,
): { syntheses: Synthesis[]; unreadable: string[] } => {
  const unreadable: string[] = [];
  const commands = [...documents].flatMap(([file, markdown]) => {
    try {
      return writtenCommands(new Map([[file, markdown]]));
    } catch (error) {
      unreadable.push((error as Error).message);
      return [];
    }
  });
  const bases = commands.filter(
    (command) => command.where.startsWith(`${DEPLOY_GUIDE}:`) && complete(command),
  );
  const syntheses = new Map<string, Synthesis>();
  for (const command of commands) {
    try {
      const synthesis = resolve(
        command,
        bases.find((base) => stageOf(base) === stageOf(command)),
      );
      const key = JSON.stringify([synthesis.context, synthesis.environment]);
      const same = syntheses.get(key);
      syntheses.set(
        key,
        same
          ? {
              ...same,
              stacks: [...new Set([...same.stacks, ...synthesis.stacks])],
              commands: [...same.commands, ...synthesis.commands],
            }
          : synthesis,
      );
    } catch (error) {
      unreadable.push((error as Error).message);
    }
  }
  return { syntheses: [...syntheses.values()], unreadable };
};
