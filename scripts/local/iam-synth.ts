import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ALWAYS_INPUTS,
  hashInputs,
  type IamCache,
  LOCAL_FAST_PATH_ROLE,
  PROJECT_ROOT,
} from './iam-policies.ts';

/**
 * Synthesizes a stage (bundling skipped: only the template is read) with the CDK context given as
 * JSON by the second argument (scripts/local/iam-policies.ts stageContext) and writes what the
 * local IAM check needs into the cache file named by the first argument: the template's
 * resources, each function's role, and the hash of every project file the synthesis loaded.
 * Run by scripts/local/iam-policies.ts in a process of its own, when its cache is out of date.
 */
const loaded = new Set<string>();
registerHooks({
  resolve(specifier, context, next) {
    const result = next(specifier, context);
    if (result.url.startsWith('file://')) {
      const path = relative(PROJECT_ROOT, fileURLToPath(result.url));
      if (!path.startsWith('..') && !path.startsWith('node_modules')) loaded.add(path);
    }
    return result;
  },
});

const [target, stageContext] = process.argv.slice(2);
if (target === undefined || stageContext === undefined)
  throw new Error('usage: iam-synth.ts <cache file> <context as JSON>');

const { App } = await import('aws-cdk-lib');
const { CreditTransferStack } = await import('../../lib/credit-transfer-stack.ts');
const { stageConfig } = await import('../../lib/stage-config.ts');
const { stackNameOf } = await import('../../lib/credit-transfer-app.ts');

const context = (JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: object })
  .context;
// Only the policies are read: CDK's own CloudFormation validation (most of a synthesis) is left to `cdk synth`.
const app = new App({
  builtinCloudFormationValidation: false,
  context: { ...context, ...(JSON.parse(stageContext) as object), 'aws:cdk:bundling-stacks': [] },
});
const config = stageConfig((name) => app.node.tryGetContext(name));
const stack = new CreditTransferStack(app, stackNameOf(config.stage), { config });
const template = app.synth().getStackByName(stack.stackName).template as { Resources: IamCache['resources'] };

const functions: Record<string, string> = {};
for (const [name, fn] of stack.functions) {
  const role = fn.role?.node.defaultChild;
  if (role === undefined) throw new Error(`${name} has no role`);
  functions[name] = stack.getLogicalId(role as Parameters<typeof stack.getLogicalId>[0]);
}
// The fast path's role starts executions of long waits: checked locally as a function's calls are.
const fastPathRole = stack.lifecycle.stateMachine.role.node.defaultChild;
functions[LOCAL_FAST_PATH_ROLE] = stack.getLogicalId(
  fastPathRole as Parameters<typeof stack.getLogicalId>[0],
);
const cache: IamCache = {
  inputs: hashInputs(
    [
      ...new Set([
        ...ALWAYS_INPUTS,
        'scripts/local/iam-synth.ts',
        'scripts/local/iam-policies.ts',
        ...loaded,
      ]),
    ].sort(),
  ),
  functions,
  resources: template.Resources,
};
// Written whole, then moved into place: a reader never sees half a file.
const partial = `${target}.${process.pid}`;
writeFileSync(partial, JSON.stringify(cache));
renameSync(partial, target);
