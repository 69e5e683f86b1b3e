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
}

/**
 * Synthesizes the app as `cdk synth -c name=value ...` would, with bundling skipped (the
 * assertions are about resources and permissions; `npm run synth` bundles). cdk-nag findings are
 * read from the validation report rather than thrown, so one finding does not hide the others.
 */
export const synthesize = (context: Record<string, string> = {}): Synthesized => {
  const { app, stack } = createApp({
    context: {
      ...CDK_JSON_CONTEXT,
      ...context,
      'aws:cdk:bundling-stacks': [],
      '@aws-cdk/core:failSynthOnValidationErrors': false,
    },
  });
  const assembly = app.synth();
  const report = JSON.parse(readFileSync(join(assembly.directory, 'validation-report.json'), 'utf8')) as {
    pluginReports: { pluginName: string; violations: { ruleName: string; severity: string }[] }[];
  };
  const nagFindings = report.pluginReports
    .filter((plugin) => plugin.pluginName === 'AwsSolutions')
    .flatMap((plugin) => plugin.violations.map((v) => `${v.severity} ${v.ruleName}`));
  return { stackName: stack.stackName, template: Template.fromStack(stack), nagFindings };
};
