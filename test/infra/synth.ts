import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Template } from 'aws-cdk-lib/assertions';
import { inject } from 'vitest';
import { PROJECT_ROOT } from '../../lib/constructs/function-defaults.ts';
import { type CliEnvironment, createApp } from '../../lib/credit-transfer-app.ts';

/** The same feature flags `cdk synth` reads from cdk.json. */
export const CDK_JSON_CONTEXT = (
  JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: object }
).context;

export interface Synthesized {
  readonly stackName: string;
  readonly template: Template;
  /** cdk-nag AwsSolutions findings not acknowledged, as `severity rule`. */
  readonly nagFindings: string[];
  /** AWS Control Tower (cfn-guard) findings not acknowledged, as `severity rule path`. */
  readonly guardFindings: string[];
  /** The stage's stack in its backup region, when there is one. */
  readonly recoveryTemplate?: Template;
}

/**
 * CDK's own CloudFormation validation is left to `cdk synth`: it only warns (its errors are
 * downgraded), no assertion reads it, and it took 23 s of a stage's 38 s of synthesis.
 */
export const BUILTIN_VALIDATION = false;

/**
 * Synthesizes the app as `cdk synth -c name=value ...` would, with bundling skipped (the
 * assertions are about resources and permissions; `npm run synth` bundles). cdk-nag and cfn-guard
 * findings are read from the validation report rather than thrown, so one finding does not hide
 * the others. Without an environment, no account or region, as the CLI without credentials.
 */
export const synthesize = (
  context: Record<string, string> = {},
  environment: CliEnvironment = {},
): Synthesized => {
  const { app, stack, recoveryStack } = createApp(
    {
      builtinCloudFormationValidation: BUILTIN_VALIDATION,
      context: {
        ...CDK_JSON_CONTEXT,
        ...context,
        'aws:cdk:bundling-stacks': [],
        '@aws-cdk/core:failSynthOnValidationErrors': false,
      },
    },
    environment,
  );
  const assembly = app.synth();
  const report = JSON.parse(readFileSync(join(assembly.directory, 'validation-report.json'), 'utf8')) as {
    pluginReports: {
      pluginName: string;
      metadata?: { error?: string };
      violations: {
        ruleName: string;
        severity: string;
        violatingConstructs?: { constructPath?: string }[];
      }[];
    }[];
  };
  // A plugin that fails reports no violation: its error must fail the test, not read as none found.
  const failed = report.pluginReports.flatMap((plugin) => plugin.metadata?.error ?? []);
  if (failed.length > 0) throw new Error(failed.join('\n'));
  const nagFindings = report.pluginReports
    .filter((plugin) => plugin.pluginName === 'AwsSolutions')
    .flatMap((plugin) => plugin.violations.map((v) => `${v.severity} ${v.ruleName}`));
  const guardFindings = report.pluginReports
    .filter((plugin) => plugin.pluginName === 'cdk-validator-cfnguard')
    .flatMap((plugin) =>
      plugin.violations.flatMap((v) =>
        (v.violatingConstructs ?? [{}]).map((c) => `${v.severity} ${v.ruleName} ${c.constructPath ?? ''}`),
      ),
    );
  return {
    stackName: stack.stackName,
    template: Template.fromStack(stack),
    nagFindings,
    guardFindings,
    ...(recoveryStack && { recoveryTemplate: Template.fromStack(recoveryStack) }),
  };
};

interface CachedStage {
  readonly stackName: string;
  readonly template: object;
  readonly nagFindings: string[];
  readonly guardFindings: string[];
  readonly recoveryTemplate?: object;
}

const cacheKey = (context: Record<string, string>): string =>
  createHash('sha256')
    .update(JSON.stringify(Object.entries(context).sort(([a], [b]) => a.localeCompare(b))))
    .digest('hex')
    .slice(0, 16);

const fromCache = (file: string): Synthesized => {
  const cached = JSON.parse(readFileSync(file, 'utf8')) as CachedStage;
  return {
    stackName: cached.stackName,
    template: Template.fromJSON(cached.template),
    nagFindings: cached.nagFindings,
    guardFindings: cached.guardFindings,
    ...(cached.recoveryTemplate && { recoveryTemplate: Template.fromJSON(cached.recoveryTemplate) }),
  };
};

/**
 * A stage's synthesis takes about 40 s of CPU, many minutes on a loaded machine, and a file may
 * wait for another's: the hooks that synthesize allow this long, and a waiter gives up after it.
 */
export const SYNTH_TIMEOUT_MS = 25 * 60_000;
const WAIT_LIMIT_MS = SYNTH_TIMEOUT_MS;

/**
 * The stages asked for, each synthesized once per test run and shared between test files through
 * the run's folder (test/infra/synth-cache-setup.ts): the first file to need a stage takes its lock
 * file and synthesizes it while the others synthesize another one or wait for it. A synthesis that
 * fails leaves its error for the waiters, so none waits forever.
 */
export const synthesized = async <const Contexts extends readonly Record<string, string>[]>(
  ...contexts: Contexts
): Promise<{ -readonly [K in keyof Contexts]: Synthesized }> => {
  const dir = inject('synthCacheDir');
  type Result = { -readonly [K in keyof Contexts]: Synthesized };
  if (dir === undefined) return contexts.map((context) => synthesize(context)) as Result;
  const results = new Map<number, Synthesized>();
  const started = Date.now();
  while (results.size < contexts.length) {
    let progressed = false;
    for (const [index, context] of contexts.entries()) {
      if (results.has(index)) continue;
      const base = join(dir, cacheKey(context));
      if (existsSync(`${base}.json`)) {
        results.set(index, fromCache(`${base}.json`));
        progressed = true;
      } else if (existsSync(`${base}.error`)) {
        throw new Error(`Synthesis failed in another test file: ${readFileSync(`${base}.error`, 'utf8')}`);
      } else if (tryLock(`${base}.lock`)) {
        results.set(index, synthesizeInto(base, context));
        progressed = true;
      }
    }
    if (!progressed) {
      if (Date.now() - started > WAIT_LIMIT_MS)
        throw new Error('Gave up waiting for another file’s synthesis');
      await sleep(250);
    }
  }
  return contexts.map((_, index) => results.get(index) as Synthesized) as Result;
};

const tryLock = (file: string): boolean => {
  try {
    closeSync(openSync(file, 'wx'));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
};

const synthesizeInto = (base: string, context: Record<string, string>): Synthesized => {
  let stage: Synthesized;
  try {
    stage = synthesize(context);
  } catch (error) {
    writeFileSync(`${base}.error`, (error as Error).message);
    throw error;
  }
  const cached: CachedStage = {
    stackName: stage.stackName,
    template: stage.template.toJSON(),
    nagFindings: stage.nagFindings,
    guardFindings: stage.guardFindings,
    ...(stage.recoveryTemplate && { recoveryTemplate: stage.recoveryTemplate.toJSON() }),
  };
  // Written whole, then renamed, so a reader never sees half a template.
  writeFileSync(`${base}.tmp`, JSON.stringify(cached));
  renameSync(`${base}.tmp`, `${base}.json`);
  return stage;
};
