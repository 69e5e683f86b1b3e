import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { CfnGuardValidator } from '@cdklabs/cdk-validator-cfnguard';
import {
  App,
  type AppProps,
  Aspects,
  type IPolicyValidationContextBeta1,
  type IPolicyValidationPluginBeta1,
  type PolicyValidationPluginReportBeta1,
  Validations,
} from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { SdkEndpointSettings } from './constructs/function-defaults.ts';
import { CreditTransferStack } from './credit-transfer-stack.ts';
import { RecoveryStack } from './recovery-stack.ts';
import { stageConfig } from './stage-config.ts';

/** One stack per stage, so stages live side by side in one account. */
export const stackNameOf = (stage: string): string => `CreditTransfers-${stage}`;

/**
 * The CDK app: the stack of one stage (context `stage`, default `dev`; every other setting in
 * lib/stage-config.ts), checked during synthesis by cdk-nag's AWS Solutions rules and by AWS
 * Control Tower's proactive rules (cfn-guard). An unacknowledged finding fails `cdk synth`; every
 * acknowledgement sits on the construct it concerns and says why.
 */
export const createApp = (
  props: AppProps = {},
): { app: App; stack: CreditTransferStack; recoveryStack?: RecoveryStack } => {
  const app = new App(props);
  const config = stageConfig((name) => app.node.tryGetContext(name));

  // Pinned to its account when one is named: `cdk synth` and `cdk deploy` refuse credentials of
  // another (the CLI sets CDK_DEFAULT_ACCOUNT from them; the stack's env.account checks again).
  const credentialsAccount = process.env.CDK_DEFAULT_ACCOUNT;
  if (
    config.account !== undefined &&
    credentialsAccount !== undefined &&
    credentialsAccount !== config.account
  ) {
    throw new Error(
      `Stage ${config.stage} is pinned to account ${config.account} (-c account), but the credentials are of account ${credentialsAccount}`,
    );
  }
  const account = config.account ?? credentialsAccount;
  const stack = new CreditTransferStack(app, stackNameOf(config.stage), {
    description: `Credit transfer API, stage ${config.stage}: REST API, Lambda functions, DynamoDB table, lifecycle workflow, KMS token signing key`,
    config,
    ...(config.account !== undefined && {
      env: { account: config.account, region: process.env.CDK_DEFAULT_REGION },
    }),
  });
  // The backup region's part of the stage, deployed there first (docs/operations.md).
  let recoveryStack: RecoveryStack | undefined;
  if (config.backup.copyRegion !== undefined) {
    recoveryStack = new RecoveryStack(app, `${stack.stackName}-recovery`, {
      description: `Credit transfer API, stage ${config.stage}: what its recovery needs in ${config.backup.copyRegion}`,
      env: { account, region: config.backup.copyRegion },
      primaryStackName: stack.stackName,
      backup: config.backup,
      tableCustomerManagedKey: config.tableCustomerManagedKey,
    });
    stack.addStackDependency(recoveryStack, 'The backup plan copies into its vault');
  }

  Aspects.of(stack).add(new SdkEndpointSettings(config.awsEndpoints));
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ControlTowerRules());
  return { app, stack, ...(recoveryStack && { recoveryStack }) };
};

/**
 * AWS Control Tower's proactive rules (cfn-guard). Its findings carry no severity, and once any
 * of them is acknowledged the CDK counts only findings of severity `error` as failing: each is
 * given that severity, so an unacknowledged one still fails `cdk synth`.
 */
class ControlTowerRules implements IPolicyValidationPluginBeta1 {
  private readonly guard = new CfnGuardValidator();
  readonly name = this.guard.name;
  readonly version = this.guard.version;
  readonly ruleIds = this.guard.ruleIds;

  validate(context: IPolicyValidationContextBeta1): PolicyValidationPluginReportBeta1 {
    // cfn-guard reads the whole template once per rule file: 237 rules took 47 s a stage. A rule
    // whose resource types are all absent from the templates cannot find anything, so it is left out.
    const guard = new CfnGuardValidator({
      disabledRules: rulesForAbsentTypes(resourceTypesOf(context.templatePaths)),
    });
    const report = guard.validate(context);
    return {
      ...report,
      violations: report.violations.map((v) => ({ ...v, severity: v.severity ?? 'error' })),
    };
  }
}

const CONTROL_TOWER_RULES = join(
  dirname(createRequire(import.meta.url).resolve('@cdklabs/cdk-validator-cfnguard')),
  '..',
  'rules/control-tower/cfn-guard',
);

const RESOURCE_TYPE = /AWS::[A-Za-z0-9]+::[A-Za-z0-9]+/g;

const resourceTypesOf = (templatePaths: readonly string[]): Set<string> =>
  new Set(
    templatePaths.flatMap((path) =>
      Object.values(
        (JSON.parse(readFileSync(path, 'utf8')) as { Resources?: Record<string, { Type: string }> })
          .Resources ?? {},
      ).map((resource) => resource.Type),
    ),
  );

/**
 * The Control Tower rules (file names, as `disabledRules` takes them) that name resource types,
 * none of them present. A rule naming no type at all is kept.
 */
export const rulesForAbsentTypes = (present: ReadonlySet<string>): string[] =>
  readdirSync(CONTROL_TOWER_RULES, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.guard'))
    .filter((file) => {
      const named = readFileSync(join(CONTROL_TOWER_RULES, file), 'utf8').match(RESOURCE_TYPE) ?? [];
      return named.length > 0 && !named.some((type) => present.has(type));
    })
    .map((file) => basename(file, '.guard'));
