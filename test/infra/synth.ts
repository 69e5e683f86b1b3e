import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { PROJECT_ROOT } from '../../lib/constructs/function-defaults.ts';
import { createApp } from '../../lib/credit-transfer-app.ts';

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
 * Synthesizes the app as `cdk synth -c name=value ...` would, with bundling skipped (the
 * assertions are about resources and permissions; `npm run synth` bundles). cdk-nag and cfn-guard
 * findings are read from the validation report rather than thrown, so one finding does not hide
 * the others.
 */
export const synthesize = (context: Record<string, string> = {}): Synthesized => {
  const { app, stack, recoveryStack } = createApp({
    context: {
      ...CDK_JSON_CONTEXT,
      ...context,
      'aws:cdk:bundling-stacks': [],
      '@aws-cdk/core:failSynthOnValidationErrors': false,
    },
  });
  const assembly = app.synth();
  const report = JSON.parse(readFileSync(join(assembly.directory, 'validation-report.json'), 'utf8')) as {
    pluginReports: {
      pluginName: string;
      violations: {
        ruleName: string;
        severity: string;
        violatingConstructs?: { constructPath?: string }[];
      }[];
    }[];
  };
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
