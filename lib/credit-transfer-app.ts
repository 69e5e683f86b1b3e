import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
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

/**
 * The account and region `cdk synth` and `cdk deploy` hand the app (CDK_DEFAULT_ACCOUNT from the
 * credentials, CDK_DEFAULT_REGION from AWS_REGION or the profile); a test may name its own.
 */
export interface CliEnvironment {
  readonly account?: string | undefined;
  readonly region?: string | undefined;
}

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
  environment: CliEnvironment = {
    account: process.env.CDK_DEFAULT_ACCOUNT,
    region: process.env.CDK_DEFAULT_REGION,
  },
): { app: App; stack: CreditTransferStack; recoveryStack?: RecoveryStack } => {
  const app = new App(props);
  const config = stageConfig((name) => app.node.tryGetContext(name));

  // Pinned to its account when one is named: `cdk synth` and `cdk deploy` refuse credentials of
  // another (the CLI sets CDK_DEFAULT_ACCOUNT from them; the stack's env.account checks again).
  const credentialsAccount = environment.account;
  if (
    config.account !== undefined &&
    credentialsAccount !== undefined &&
    credentialsAccount !== config.account
  ) {
    throw new Error(
      `Stage ${config.stage} is pinned to account ${config.account} (-c account), but the credentials are of account ${credentialsAccount}`,
    );
  }
  // Likewise pinned to its region: a profile or AWS_REGION of another region fails in one line.
  const credentialsRegion = environment.region;
  if (config.region !== undefined && credentialsRegion !== undefined && credentialsRegion !== config.region) {
    throw new Error(
      `Stage ${config.stage} is pinned to region ${config.region} (-c region), but the credentials' region is ${credentialsRegion}`,
    );
  }
  const account = config.account ?? credentialsAccount;
  const stack = new CreditTransferStack(app, stackNameOf(config.stage), {
    description: `Credit transfer API, stage ${config.stage}: REST API, Lambda functions, DynamoDB table, lifecycle workflow, KMS token signing key`,
    config,
    ...((config.account !== undefined || config.region !== undefined) && {
      env: { account: config.account ?? credentialsAccount, region: config.region ?? credentialsRegion },
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
export class ControlTowerRules implements IPolicyValidationPluginBeta1 {
  private readonly guard = new CfnGuardValidator();
  readonly name = this.guard.name;
  readonly version = this.guard.version;
  readonly ruleIds = this.guard.ruleIds;

  validate(context: IPolicyValidationContextBeta1): PolicyValidationPluginReportBeta1 {
    const templates = context.templatePaths.map((path) => ({
      path,
      template: JSON.parse(readFileSync(path, 'utf8')) as CloudFormationTemplate,
    }));
    const folder = mkdtempSync(join(tmpdir(), 'control-tower-'));
    try {
      const violations = ruleGroups(resourceTypesOf(templates.map((t) => t.template))).flatMap(
        ({ types, rules }, group) => {
          // cfn-guard reads the whole template once per rule file, and its time grows with the
          // template: each group of rules is handed only the resources of the types it names.
          const written = templates.map(({ path, template }, index) => {
            const copy = join(folder, `${group}-${index}.json`);
            writeFileSync(copy, JSON.stringify(withResourcesOf(template, types), undefined, 1));
            return { copy, path };
          });
          const original = new Map(written.map(({ copy, path }) => [copy, path]));
          const report = new CfnGuardValidator({ controlTowerRulesEnabled: false, rules }).validate({
            ...context,
            templatePaths: written.map(({ copy }) => copy),
          });
          return report.violations.map((v) => ({
            ...v,
            severity: v.severity ?? 'error',
            violatingResources: v.violatingResources.map((r) => ({
              ...r,
              templatePath: original.get(r.templatePath) ?? r.templatePath,
            })),
          }));
        },
      );
      return { success: violations.length === 0, violations };
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }
}

interface CloudFormationTemplate {
  Resources?: Record<string, { Type: string }>;
}

const CONTROL_TOWER_RULES = join(
  dirname(createRequire(import.meta.url).resolve('@cdklabs/cdk-validator-cfnguard')),
  '..',
  'rules/control-tower/cfn-guard',
);

const RESOURCE_TYPE = /AWS::[A-Za-z0-9]+::[A-Za-z0-9]+/g;

const resourceTypesOf = (templates: readonly CloudFormationTemplate[]): Set<string> =>
  new Set(templates.flatMap((template) => Object.values(template.Resources ?? {}).map((r) => r.Type)));

/**
 * The template with only the resources of the given types and those they reference (rules look
 * a reference up by its logical id), every other section as it is.
 */
export const withResourcesOf = <Template extends CloudFormationTemplate>(
  template: Template,
  types: ReadonlySet<string> | undefined,
): Template => {
  if (types === undefined) return template;
  const resources = template.Resources ?? {};
  const kept = new Set(Object.keys(resources).filter((id) => types.has(resources[id]?.Type ?? '')));
  const pending = [...kept];
  for (let id = pending.pop(); id !== undefined; id = pending.pop()) {
    for (const referenced of referencesOf(resources[id])) {
      if (referenced in resources && !kept.has(referenced)) {
        kept.add(referenced);
        pending.push(referenced);
      }
    }
  }
  return { ...template, Resources: Object.fromEntries([...kept].map((id) => [id, resources[id]])) };
};

/** The logical ids a value names through Ref, Fn::GetAtt, Fn::Sub or DependsOn. */
const referencesOf = (value: unknown): string[] => {
  if (Array.isArray(value)) return value.flatMap(referencesOf);
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, inner]): string[] => {
    if (key === 'Ref' && typeof inner === 'string') return [inner];
    if (key === 'Fn::GetAtt')
      return [String(Array.isArray(inner) ? inner[0] : inner).split('.')[0] ?? '', ...referencesOf(inner)];
    if (key === 'Fn::Sub') {
      const text = Array.isArray(inner) ? inner[0] : inner;
      const named =
        typeof text === 'string' ? [...text.matchAll(/\$\{([^}.!]+)/g)].map((m) => m[1] ?? '') : [];
      return [...named, ...referencesOf(inner)];
    }
    if (key === 'DependsOn') return [inner].flat().filter((id): id is string => typeof id === 'string');
    return referencesOf(inner);
  });
};

interface ControlTowerRule {
  /** The file name without `.guard`, as `disabledRules` and acknowledgements name it. */
  name: string;
  file: string;
  /** Every resource type the rule names, among them those it looks up by reference. */
  types: ReadonlySet<string>;
}

let controlTowerRules: ControlTowerRule[] | undefined;
const allControlTowerRules = (): ControlTowerRule[] => {
  controlTowerRules ??= readdirSync(CONTROL_TOWER_RULES, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.guard'))
    .map((file) => ({
      name: basename(file, '.guard'),
      file: join(CONTROL_TOWER_RULES, file),
      types: new Set(readFileSync(join(CONTROL_TOWER_RULES, file), 'utf8').match(RESOURCE_TYPE) ?? []),
    }));
  return controlTowerRules;
};

/**
 * The Control Tower rules (file names, as `disabledRules` takes them) that name resource types,
 * none of them present. A rule naming no type at all is kept.
 */
export const rulesForAbsentTypes = (present: ReadonlySet<string>): string[] =>
  allControlTowerRules()
    .filter((rule) => rule.types.size > 0 && ![...rule.types].some((type) => present.has(type)))
    .map((rule) => rule.name);

/**
 * The rules that can find something among the present types, grouped by the types they name (the
 * resources each group is shown). A rule naming no type is shown the whole template.
 */
const ruleGroups = (
  present: ReadonlySet<string>,
): { types: ReadonlySet<string> | undefined; rules: string[] }[] => {
  const absent = new Set(rulesForAbsentTypes(present));
  const groups = new Map<string, { types: ReadonlySet<string> | undefined; rules: string[] }>();
  for (const rule of allControlTowerRules()) {
    if (absent.has(rule.name)) continue;
    const key = rule.types.size === 0 ? '' : [...rule.types].sort().join(' ');
    const group = groups.get(key) ?? { types: rule.types.size === 0 ? undefined : rule.types, rules: [] };
    group.rules.push(rule.file);
    groups.set(key, group);
  }
  return [...groups.values()];
};
