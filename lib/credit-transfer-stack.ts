import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { type IMetric, MathExpression, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { CfnFunction, Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { LogLevel } from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';
import { ROUTES } from '#routes';
import { GATEWAY_RESPONSES } from '#shared/gateway-responses';
import { CreditTransferApi } from './constructs/api.ts';
import { BatchLifecycles } from './constructs/batch-lifecycles.ts';
import { ListCursorKey } from './constructs/cursor-key.ts';
import { bind } from './constructs/function-defaults.ts';
import { CreditTransferLifecycle } from './constructs/lifecycle-workflow.ts';
import { Monitoring, type Severity } from './constructs/monitoring.ts';
import { TokenSigningKeys } from './constructs/signing-key.ts';
import { StatusEventConsumer } from './constructs/status-event-consumer.ts';
import { CreditTransferTable } from './constructs/table.ts';
import { TableBackup } from './constructs/table-backup.ts';
import { TraceSampling } from './constructs/trace-sampling.ts';
import { ApiWebAcl, wafApiRateLimit } from './constructs/web-acl.ts';
import { WebhookDelivery } from './constructs/webhook-delivery.ts';
import { WebhookSecretKey } from './constructs/webhook-secret-key.ts';
import {
  AUTHORIZER_BINDINGS,
  railAccess,
  routeBindings,
  type ServiceResources,
} from './function-bindings.ts';
import type { FunctionGroup } from './operations-config.ts';
import type { StageConfig } from './stage-config.ts';

export interface CreditTransferStackProps extends StackProps {
  /** The stage's settings (lib/stage-config.ts). */
  readonly config: StageConfig;
}

/**
 * One stage of the service. Nothing has a fixed physical name: every name that must be unique
 * in the account carries the stack's name, so stages live side by side.
 */
export class CreditTransferStack extends Stack {
  readonly table: CreditTransferTable;
  readonly signingKey: TokenSigningKeys;
  readonly cursorKey: ListCursorKey;
  readonly webhookSecretKey: WebhookSecretKey;
  readonly api: CreditTransferApi;
  readonly lifecycle: CreditTransferLifecycle;
  readonly batchLifecycles: BatchLifecycles;
  /** The example consumer queue; absent on `prod` (context exampleConsumer). */
  readonly statusEventConsumer?: StatusEventConsumer;
  readonly webhooks: WebhookDelivery;
  readonly connectorSecret?: ISecret;
  readonly webAcl?: ApiWebAcl;
  readonly monitoring: Monitoring;
  readonly backup: TableBackup;
  /** Every function by the name it is known by (`Authorizer`, `IssueToken`, `Reconciler`...). */
  readonly functions: ReadonlyMap<string, LambdaFunction>;

  constructor(scope: Construct, id: string, props: CreditTransferStackProps) {
    super(scope, id, props);
    const { config } = props;

    this.table = new CreditTransferTable(this, 'CreditTransfers', {
      customerManagedKey: config.tableCustomerManagedKey,
      ...(config.backup.tableReplica && { replicaRegion: config.backup.copyRegion }),
    });
    // The generation's key and the one before it; `npm run keys -- rotate` moves between them.
    this.signingKey = new TokenSigningKeys(this, 'TokenSigningKeys', {
      generation: config.signingKeyGeneration,
      ...(config.signingKeyEs256FromGeneration !== undefined && {
        es256FromGeneration: config.signingKeyEs256FromGeneration,
      }),
      ...(config.backupRegion !== undefined && { backupRegion: config.backupRegion }),
    });
    this.cursorKey = new ListCursorKey(this, 'ListCursorKey');
    this.webhookSecretKey = new WebhookSecretKey(this, 'WebhookSecretKey');
    this.backup = new TableBackup(this, 'Backup', {
      table: this.table.table,
      name: this.stackName,
      config: config.backup,
    });

    if (config.rail.kind === 'connector') {
      this.connectorSecret =
        config.rail.secretArn === undefined
          ? this.createConnectorSecret(config.backup.copyRegion)
          : Secret.fromSecretCompleteArn(this, 'ConnectorSecret', config.rail.secretArn);
    }
    const rail = railAccess(
      config.rail.kind === 'connector' && this.connectorSecret
        ? {
            kind: 'connector',
            url: config.rail.url,
            secret: this.connectorSecret,
            ...(config.rail.secretKeyArn !== undefined && { secretKeyArn: config.rail.secretKeyArn }),
          }
        : { kind: 'sandbox' },
      this.table.table,
    );

    this.lifecycle = new CreditTransferLifecycle(this, 'Lifecycle', {
      table: this.table.table,
      rail,
      name: `${this.stackName}-lifecycle`,
      logRetention: config.logRetention,
      reconcileEvery: RECONCILE_EVERY,
      logLevel: LogLevel[config.workflowLogLevel],
    });
    if (config.exampleConsumer) {
      this.statusEventConsumer = new StatusEventConsumer(this, 'StatusEventConsumer', {
        eventBus: this.lifecycle.eventBus,
      });
    }
    const consumer = this.statusEventConsumer;

    this.webhooks = new WebhookDelivery(this, 'Webhooks', {
      eventBus: this.lifecycle.eventBus,
      table: this.table.table,
      secretKey: this.webhookSecretKey,
      logRetention: config.logRetention,
      stageName: config.stage,
    });

    this.api = new CreditTransferApi(this, 'Api', {
      stageName: config.stage,
      apiName: this.stackName,
      routes: ROUTES,
      gatewayResponses: GATEWAY_RESPONSES,
      tenantRateLimit: config.tenantRateLimit,
      logRetention: config.logRetention,
      setAccountCloudWatchRole: config.apiGatewayCloudWatchRole,
      webAcl: config.waf,
      ...(config.customDomain && { customDomain: config.customDomain }),
      provisionedConcurrency: {
        authorizer: config.provisionedConcurrency.authorizer,
        routes: {
          initiateCreditTransfer: config.provisionedConcurrency.initiation,
          getCreditTransferStatus: config.provisionedConcurrency.status,
        },
      },
      ...(config.mtlsTruststore && { mtlsTruststore: config.mtlsTruststore }),
    });
    if (config.waf) {
      this.webAcl = new ApiWebAcl(this, 'WebAcl', {
        stageArn: this.api.restApi.deploymentStage.stageArn,
        name: this.stackName,
        logRetention: config.logRetention,
        // A tenant at its default plan's rate is never blocked (docs/rate-limits.md).
        apiRateLimit: wafApiRateLimit(config.tenantRateLimit.ratePerSecond),
      });
    }

    new TraceSampling(this, 'TraceSampling', {
      stage: config.stage,
      apiStageArn: this.api.restApi.deploymentStage.stageArn,
      stateMachineArn: this.lifecycle.stateMachine.stateMachineArn,
      fixedRate: config.xraySamplingRate,
    });

    this.batchLifecycles = new BatchLifecycles(this, 'BatchLifecycles', {
      table: this.table.table,
      lifecycle: this.lifecycle.stateMachine,
      statusPublisher: this.lifecycle.taskFunctions.publishStatusEvents.function,
      startsPerSecond: config.batchStartsPerSecond,
      logRetention: config.logRetention,
    });

    const resources: ServiceResources = {
      table: this.table.table,
      signingKey: this.signingKey,
      cursorKey: this.cursorKey,
      lifecycle: this.lifecycle.stateMachine,
      batchLifecycles: this.batchLifecycles.function.function,
      statusPublisher: this.lifecycle.taskFunctions.publishStatusEvents.function,
      webhookSecretKey: this.webhookSecretKey,
      issuer: config.issuer,
      audience: config.audience,
      clientSecrets: config.clientSecrets,
      requireDpop: config.requireDpop,
      ...(config.dpopNonces && { dpopNonceSecret: this.createDpopNonceSecret() }),
    };
    for (const route of ROUTES) {
      bind(this.api.functionFor(route.operationId).function, ...routeBindings(route.operationId)(resources));
    }
    bind(this.api.authorizerFunction.function, ...AUTHORIZER_BINDINGS(resources));

    // Every function by a readable name, with its concurrency group.
    const grouped: [string, LambdaFunction, FunctionGroup][] = [
      ['Authorizer', this.api.authorizerFunction.function, 'authorizer'],
      ...ROUTES.map((route): [string, LambdaFunction, FunctionGroup] => [
        pascalCase(route.operationId),
        this.api.functionFor(route.operationId).function,
        // Public routes have method throttles of their own, well below the stage's.
        route.scope === undefined ? 'public' : 'api',
      ]),
      ...Object.entries(this.lifecycle.taskFunctions).map(
        ([key, fn]): [string, LambdaFunction, FunctionGroup] => [
          pascalCase(key),
          fn.function,
          // The catch-all: sized for an outage, when every execution ends in it.
          key === 'parkTransfer' ? 'parking' : 'workflow',
        ],
      ),
      ['Reconciler', this.lifecycle.reconciler.function, 'reconciler'],
      // Starts a batch's executions behind the API, as the workflow's own steps run.
      ['StartBatchLifecycles', this.batchLifecycles.function.function, 'workflow'],
      // Webhook delivery shares the workflow's reserved share: both run behind the API, off its path.
      ['WebhookIngest', this.webhooks.ingestFunction.function, 'workflow'],
      ['WebhookDeliver', this.webhooks.deliverFunction.function, 'workflow'],
    ];
    for (const [, fn, group] of grouped) {
      // The stage is a dimension of the service's own metrics (lambdas/shared/metrics.ts).
      fn.addEnvironment('STAGE', config.stage);
      const reserved = config.reservedConcurrency[group];
      // A stage's own share of the account's concurrency: another stage cannot starve it.
      if (reserved !== undefined)
        (fn.node.defaultChild as CfnFunction).reservedConcurrentExecutions = reserved;
    }
    const functions = new Map(grouped.map(([name, fn]): [string, LambdaFunction] => [name, fn]));
    this.functions = functions;
    this.monitoring = new Monitoring(this, 'Monitoring', {
      name: this.stackName,
      stage: this.api.restApi.deploymentStage,
      accessLogs: this.api.accessLogs,
      stageName: config.stage,
      functions,
      authorizer: this.api.authorizerFunction.function,
      reconciler: { function: this.lifecycle.reconciler.function, every: RECONCILE_EVERY },
      stateMachine: this.lifecycle.stateMachine,
      longWaits: this.lifecycle.longWaits,
      table: this.table.table,
      deadLetterQueues: new Map([
        ...(consumer
          ? ([
              ['StatusEventQueueDeadLetters', consumer.queueDeadLetters],
              ['StatusEventRuleDeadLetters', consumer.ruleDeadLetters],
            ] as const)
          : []),
        ['WebhookQueueDeadLetters', this.webhooks.queueDeadLetters],
        ['BatchLifecyclesDeadLetters', this.batchLifecycles.deadLetters],
        ['WebhookRuleDeadLetters', this.webhooks.ruleDeadLetters],
      ]),
      countAlarms: new Map<string, { description: string; metric: IMetric; severity?: Severity }>([
        ...backupJobAlarms(this.backup.vault.backupVaultName),
        ...(config.backup.tableReplica && config.backup.copyRegion !== undefined
          ? [replicationLagAlarm(this.table.table.tableName, config.backup.copyRegion)]
          : []),
        [
          'WebhookEndpointDisabled',
          {
            description: 'A webhook endpoint was disabled: it answered 410 Gone or failed for three days',
            metric: this.webhooks.endpointsDisabled,
          },
        ],
        [
          'StatusEventForged',
          {
            description:
              'A status event that is no change of a stored transfer reached the webhook ingestion and was dropped: someone put it on the bus',
            metric: this.webhooks.forgedStatusEvents,
            // Someone who can put events on the bus could make consumers act on payments that never moved.
            severity: 'page',
          },
        ],
      ]),
      queueAges: new Map([
        ...(consumer
          ? ([
              // A reader an hour behind is a reader in trouble.
              ['StatusEventQueue', { queue: consumer.queue, oldestMessageBound: Duration.hours(1) }],
              // Half the dead-letter queues' 14 days: a week left to redrive before messages are lost.
              [
                'StatusEventQueueDeadLetters',
                { queue: consumer.queueDeadLetters, oldestMessageBound: Duration.days(7) },
              ],
              [
                'StatusEventRuleDeadLetters',
                { queue: consumer.ruleDeadLetters, oldestMessageBound: Duration.days(7) },
              ],
            ] as const)
          : []),
        // Deliveries piling up: every tenant's webhooks late.
        [
          'WebhookQueue',
          { queue: this.webhooks.queue, oldestMessageBound: Duration.minutes(15), severity: 'page' },
        ],
        // Wake-ups wait at most 15 minutes (the queue's longest delay), then are read at once: an hour
        // old means the retry sender is not reading them (retries still go out each minute).
        ['WebhookWakeUps', { queue: this.webhooks.wakeUps, oldestMessageBound: Duration.hours(1) }],
        [
          'WebhookQueueDeadLetters',
          { queue: this.webhooks.queueDeadLetters, oldestMessageBound: Duration.days(7) },
        ],
        [
          'WebhookRuleDeadLetters',
          { queue: this.webhooks.ruleDeadLetters, oldestMessageBound: Duration.days(7) },
        ],
        [
          'BatchLifecyclesDeadLetters',
          { queue: this.batchLifecycles.deadLetters, oldestMessageBound: Duration.days(7) },
        ],
      ]),
      ...(this.webAcl && { webAclName: this.webAcl.name }),
      ...(config.alarmEmail !== undefined && { alarmEmail: config.alarmEmail }),
      ...(config.alarmTopicArn !== undefined && { alarmTopicArn: config.alarmTopicArn }),
      ...(config.ticketEmail !== undefined && { ticketEmail: config.ticketEmail }),
      ...(config.ticketTopicArn !== undefined && { ticketTopicArn: config.ticketTopicArn }),
    });

    // Every KMS key of the stage (signing, table, webhook, cursor, topic keys): a change to any pages.
    this.monitoring.pageOnKeyChanges(
      this.node.findAll().filter((construct): construct is Key => construct instanceof Key),
    );

    this.acknowledgeControlTowerRules(config);

    // With a custom domain the execute-api endpoint is disabled: the domain is the only way in.
    new CfnOutput(this, 'ApiUrl', {
      value: config.customDomain ? `https://${config.customDomain.domainName}/` : this.api.restApi.url,
      description: 'Base URL of the API stage',
    });
    if (this.api.domain) {
      new CfnOutput(this, 'CustomDomainTarget', {
        value: this.api.domain.domainNameAliasDomainName,
        description: `Point ${this.api.domain.domainName} here (CNAME, or alias A record in hosted zone ${this.api.domain.domainNameAliasHostedZoneId})`,
      });
    }
    new CfnOutput(this, 'Issuer', { value: config.issuer, description: 'The iss of the access tokens' });
    new CfnOutput(this, 'TableName', { value: this.table.table.tableName });
    new CfnOutput(this, 'DefaultUsagePlanId', {
      value: this.api.defaultUsagePlan.usagePlanId,
      description: 'The usage plan of tenants without a limit of their own (npm run clients -- --usage-plan)',
    });
    new CfnOutput(this, 'LifecycleStateMachineArn', { value: this.lifecycle.stateMachine.stateMachineArn });
    new CfnOutput(this, 'LifecycleLongWaitsStateMachineArn', {
      value: this.lifecycle.longWaits.stateMachineArn,
      description: 'The Standard state machine the fast path hands value-date holds and slow clearing to',
    });
    new CfnOutput(this, 'StatusEventBusName', {
      value: this.lifecycle.eventBus.eventBusName,
      description: 'EventBridge bus of the CreditTransferStatusChanged events',
    });
    if (consumer) {
      new CfnOutput(this, 'StatusEventQueueUrl', {
        value: consumer.queue.queueUrl,
        description: 'The example consumer: every status change, as an SQS message',
      });
    }
    new CfnOutput(this, 'SigningKeyId', {
      value: this.signingKey.newest.keyId,
      description: "The newest KMS key for the access tokens (the signing key generation's)",
    });
    new CfnOutput(this, 'SigningKeyIds', {
      value: this.signingKey.keyIds,
      description:
        'The KMS keys for the access tokens, oldest first: npm run keys -- rotate --signing-key-ids',
    });
    new CfnOutput(this, 'AlarmTopicArn', {
      value: this.monitoring.topic.topicArn,
      description: 'The alarms that page (money at risk, clients refused)',
    });
    new CfnOutput(this, 'TicketTopicArn', {
      value: this.monitoring.ticketTopic.topicArn,
      description: 'The alarms that open a ticket',
    });
    if (this.connectorSecret) {
      new CfnOutput(this, 'ConnectorSecretArn', {
        value: this.connectorSecret.secretArn,
        description: 'HMAC key the workflow signs connector requests with',
      });
    }
  }

  /** Control Tower rules this stack does not follow, stack-wide choices, each with its reason. */
  private acknowledgeControlTowerRules(config: StageConfig): void {
    Validations.of(this).acknowledge(
      {
        id: 'cdk-validator-cfnguard::lambda_inside_vpc_check',
        reason:
          'The functions reach only AWS APIs and the https connector, each authenticated (SigV4, HMAC) and over TLS; a VPC would add NAT gateways or an interface endpoint per service per zone and cold-start latency without guarding any data the IAM grants do not already guard.',
      },
      {
        id: 'cdk-validator-cfnguard::cloudwatch_log_group_encrypted_check',
        reason:
          'CloudWatch Logs encrypts every log group at rest with keys of its own; the logs hold identifiers and errors, never request bodies, secrets or tokens (API logs at ERROR without data trace, WAF logs with Authorization redacted, executions without input or output).',
      },
    );
    if (config.logRetention !== RetentionDays.INFINITE && config.logRetention < RetentionDays.ONE_YEAR) {
      Validations.of(this).acknowledge({
        id: 'cdk-validator-cfnguard::cloudwatch_log_group_retention_period_check',
        reason: `Stage ${config.stage} keeps its logs ${config.logRetention} days by choice (context logRetentionDays; a year on prod by default).`,
      });
    }
  }

  /** A generated HMAC key, retained: the connector holds the same key, and losing it stops payments. */
  /**
   * The HMAC key DPoP server nonces are made with (RFC 9449 8). Only this stack's token function
   * reads it; a new value only makes the nonces given out before it fail once (the client retries
   * with the nonce of the refusal), so it needs no replica and no rotation function.
   */
  private createDpopNonceSecret(): Secret {
    const secret = new Secret(this, 'DpopNonceSecret', {
      description: `HMAC key the token function of ${this.stackName} makes DPoP server nonces with`,
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
    });
    Validations.of(secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'A nonce lives 300 s and a client recovers from a refused one by retrying with the nonce of the refusal; a new secret is a redeploy with a new value, no rotation function is needed.',
    });
    return secret;
  }

  private createConnectorSecret(replicaRegion: string | undefined): Secret {
    const secret = new Secret(this, 'ConnectorSecret', {
      description: `HMAC key the credit transfer workflow (${this.stackName}) signs connector requests with`,
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
      removalPolicy: RemovalPolicy.RETAIN,
      // A copy in the backup region, for a stage redeployed there after a region is lost.
      ...(replicaRegion !== undefined && { replicaRegions: [{ region: replicaRegion }] }),
    });
    Validations.of(secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The key is shared with the clearing connector, which must hold the new key before the workflow signs with it; rotation is a coordinated operator step (docs/operations.md, "Keys and secrets"), not a Lambda rotation.',
    });
    return secret;
  }
}

/** How often the schedule runs the reconciler: also its heartbeat alarm's period. */
const RECONCILE_EVERY = Duration.minutes(5);

const pascalCase = (name: string): string => name.charAt(0).toUpperCase() + name.slice(1);

/** AWS Backup's job counts of the stage's vault (namespace AWS/Backup, by vault and resource type). */
const backupJobMetric = (metricName: string, vaultName: string): Metric =>
  new Metric({
    namespace: 'AWS/Backup',
    metricName,
    dimensionsMap: { BackupVaultName: vaultName, ResourceType: 'DynamoDB' },
    statistic: 'Sum',
    period: Duration.hours(1),
  });

/**
 * The replica falls behind: the recovery point for a lost region is no longer seconds. DynamoDB's
 * ReplicationLatency (ms, per receiving region), its 5-minute maximum above a minute.
 */
const replicationLagAlarm = (
  tableName: string,
  region: string,
): [string, { description: string; metric: IMetric; severity: Severity }] => [
  'TableReplicationLag',
  {
    description: `The table's replica in ${region} is more than a minute behind: a lost region would lose that much`,
    metric: new MathExpression({
      expression: 'IF(latency > 60000, 1, 0)',
      usingMetrics: {
        latency: new Metric({
          namespace: 'AWS/DynamoDB',
          metricName: 'ReplicationLatency',
          dimensionsMap: { TableName: tableName, ReceivingRegion: region },
          statistic: 'Maximum',
          period: Duration.minutes(5),
        }),
      },
      period: Duration.minutes(5),
    }),
    severity: 'ticket',
  },
];

/** A failed nightly backup or copy moves the recovery point back a day: a ticket, not a page. */
const backupJobAlarms = (
  vaultName: string,
): [string, { description: string; metric: IMetric; severity: Severity }][] => [
  [
    'BackupJobsFailed',
    {
      description:
        'A backup job of the table failed, was aborted or expired: the newest recovery point is older than planned',
      metric: new MathExpression({
        expression: 'failed + aborted + expired',
        usingMetrics: {
          failed: backupJobMetric('NumberOfBackupJobsFailed', vaultName),
          aborted: backupJobMetric('NumberOfBackupJobsAborted', vaultName),
          expired: backupJobMetric('NumberOfBackupJobsExpired', vaultName),
        },
        period: Duration.hours(1),
      }),
      severity: 'ticket',
    },
  ],
  [
    'BackupCopyJobsFailed',
    {
      description:
        'A copy of a table backup to another region or account failed: the recovery point for the loss of a region is older than planned',
      metric: backupJobMetric('NumberOfCopyJobsFailed', vaultName),
      severity: 'ticket',
    },
  ],
];
