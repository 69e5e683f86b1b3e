import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration, type IAspect, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { type IGrantable, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  Alias,
  Architecture,
  type IFunction,
  type Function as LambdaFunction,
  Runtime,
  Tracing,
} from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct, type IConstruct } from 'constructs';
import { memoryOf } from '../function-memory.ts';
import { BUNDLE_OPTIONS, routeAssets, staticAssetHooks } from './bundling.ts';

/** The repository root: handler entries in the route table are relative to it. */
export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Lambda's Node 24 runtime, the same major `npm start` and `npm test` run on. */
export const FUNCTION_RUNTIME = Runtime.NODEJS_24_X;

export interface ServiceFunctionProps {
  /** Handler source file, relative to the project root; it exports `handler`. */
  readonly entry: string;
  readonly description: string;
  /** @default 10 seconds, well inside API Gateway's 29-second integration timeout */
  readonly timeout?: Duration;
  /** @default three months */
  readonly logRetention?: RetentionDays;
  /**
   * ACTIVE: Lambda samples what no sampled caller started (its own rule, about 5 % beyond the first
   * each second). PASS_THROUGH: traced only when the invocation carries its caller's decision to
   * sample (`Sampled=1`), so it costs no trace of its own.
   * @default Tracing.ACTIVE
   */
  readonly tracing?: Tracing.ACTIVE | Tracing.PASS_THROUGH;
  /**
   * Instances kept initialised, through an alias that callers invoke instead of the function.
   * @default 0 (none: every instance starts cold on demand)
   */
  readonly provisionedConcurrency?: number;
}

/**
 * The one way this service makes a Lambda function: Node 24 on arm64, X-Ray tracing, its own
 * log group with retention, its own role that may only write to that log group, and an ESM,
 * minified bundle built with the options of bundling.ts (the runtime's AWS SDK, no source maps).
 * Permissions and environment come afterwards, together, through `bind`.
 */
export class ServiceFunction extends Construct {
  readonly function: NodejsFunction;
  readonly logGroup: LogGroup;
  /** What callers invoke: the alias with provisioned concurrency, or else the function itself. */
  readonly invocable: IFunction;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);

    this.logGroup = new LogGroup(this, 'LogGroup', {
      retention: props.logRetention ?? RetentionDays.THREE_MONTHS,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    // An own role instead of the default one with AWSLambdaBasicExecutionRole, which may
    // create and write any log group in the account.
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Runs ${props.entry}`,
    });
    this.logGroup.grantWrite(role);

    this.function = new NodejsFunction(this, 'Function', {
      entry: join(PROJECT_ROOT, props.entry),
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: join(PROJECT_ROOT, 'package-lock.json'),
      description: props.description,
      runtime: FUNCTION_RUNTIME,
      architecture: Architecture.ARM_64,
      // By entry, from one table (lib/function-memory.ts): more memory is more CPU, and costs more.
      memorySize: memoryOf(props.entry),
      timeout: props.timeout ?? Duration.seconds(10),
      tracing: props.tracing ?? Tracing.ACTIVE,
      logGroup: this.logGroup,
      role,
      bundling: {
        format: OutputFormat.ESM,
        target: BUNDLE_OPTIONS.target,
        mainFields: [...BUNDLE_OPTIONS.mainFields],
        banner: BUNDLE_OPTIONS.banner,
        minify: BUNDLE_OPTIONS.minify,
        sourceMap: BUNDLE_OPTIONS.sourcemap,
        keepNames: BUNDLE_OPTIONS.keepNames,
        externalModules: [...BUNDLE_OPTIONS.external],
        esbuildArgs: Object.fromEntries(
          Object.entries(BUNDLE_OPTIONS.alias).map(([name, path]) => [`--alias:${name}`, path]),
        ),
        // The route's static files go beside the bundle, where the handler reads them.
        commandHooks: staticAssetHooks(routeAssets(props.entry)),
      },
    });

    const provisioned = props.provisionedConcurrency ?? 0;
    this.invocable =
      provisioned > 0
        ? new Alias(this, 'Live', {
            aliasName: 'live',
            version: this.function.currentVersion,
            provisionedConcurrentExecutions: provisioned,
          })
        : this.function;

    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Active tracing needs xray:PutTraceSegments and xray:PutTelemetryRecords, which support no ' +
        'resource-level permissions; every other statement of this role names its resource ' +
        '(asserted in test/infra).',
    });
  }
}

/**
 * What a function needs of one resource: the environment that tells it where the resource is,
 * and the grant that lets it do exactly what it does there.
 */
export interface Binding {
  readonly environment?: Readonly<Record<string, string>>;
  readonly grant?: (grantee: IGrantable) => void;
}

/** Grants and sets the environment together, so a function never knows a resource it may not use. */
export const bind = (target: LambdaFunction, ...bindings: readonly Binding[]): void => {
  for (const binding of bindings) {
    for (const [name, value] of Object.entries(binding.environment ?? {})) {
      target.addEnvironment(name, value);
    }
    binding.grant?.(target);
  }
};

/** The AWS SDK's own variables for its endpoint variants (docs/aws-sdk.md). */
export const sdkEndpointEnvironment = (settings: {
  readonly fips: boolean;
  readonly dualStack: boolean;
}): Record<string, string> => ({
  ...(settings.fips && { AWS_USE_FIPS_ENDPOINT: 'true' }),
  ...(settings.dualStack && { AWS_USE_DUALSTACK_ENDPOINT: 'true' }),
});

/** Sets the SDK's endpoint variables on every function of the scope, whoever made it. */
export class SdkEndpointSettings implements IAspect {
  constructor(private readonly settings: { readonly fips: boolean; readonly dualStack: boolean }) {}

  visit(node: IConstruct): void {
    if (!(node instanceof ServiceFunction)) return;
    for (const [name, value] of Object.entries(sdkEndpointEnvironment(this.settings))) {
      node.function.addEnvironment(name, value);
    }
  }
}
