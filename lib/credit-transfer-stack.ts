import { CfnOutput, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { ROUTES } from '#routes';
import { GATEWAY_RESPONSES } from '#shared/gateway-responses';
import { CreditTransferApi } from './constructs/api.ts';
import { ListCursorKey } from './constructs/cursor-key.ts';
import { bind } from './constructs/function-defaults.ts';
import { CreditTransferLifecycle } from './constructs/lifecycle-workflow.ts';
import { Monitoring } from './constructs/monitoring.ts';
import { TokenSigningKeys } from './constructs/signing-key.ts';
import { StatusEventConsumer } from './constructs/status-event-consumer.ts';
import { CreditTransferTable } from './constructs/table.ts';
import { ApiWebAcl } from './constructs/web-acl.ts';
import { WebhookDelivery } from './constructs/webhook-delivery.ts';
import {
  AUTHORIZER_BINDINGS,
  railAccess,
  routeBindings,
  type ServiceResources,
} from './function-bindings.ts';
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
  readonly api: CreditTransferApi;
  readonly lifecycle: CreditTransferLifecycle;
  readonly statusEventConsumer: StatusEventConsumer;
  readonly webhooks: WebhookDelivery;
  readonly connectorSecret?: ISecret;
  readonly webAcl?: ApiWebAcl;
  readonly monitoring: Monitoring;

  constructor(scope: Construct, id: string, props: CreditTransferStackProps) {
    super(scope, id, props);
    const { config } = props;

    this.table = new CreditTransferTable(this, 'CreditTransfers', {
      customerManagedKey: config.tableCustomerManagedKey,
    });
    // The generation's key and the one before it; `npm run keys -- rotate` moves between them.
    this.signingKey = new TokenSigningKeys(this, 'TokenSigningKeys', {
      generation: config.signingKeyGeneration,
      ...(config.backupRegion !== undefined && { backupRegion: config.backupRegion }),
    });
    this.cursorKey = new ListCursorKey(this, 'ListCursorKey');

    if (config.rail.kind === 'connector') {
      this.connectorSecret =
        config.rail.secretArn === undefined
          ? this.createConnectorSecret()
          : Secret.fromSecretCompleteArn(this, 'ConnectorSecret', config.rail.secretArn);
    }
    const rail = railAccess(
      config.rail.kind === 'connector' && this.connectorSecret
        ? { kind: 'connector', url: config.rail.url, secret: this.connectorSecret }
        : { kind: 'sandbox' },
    );

    this.lifecycle = new CreditTransferLifecycle(this, 'Lifecycle', {
      table: this.table.table,
      rail,
      name: `${this.stackName}-lifecycle`,
      logRetention: config.logRetention,
    });
    this.statusEventConsumer = new StatusEventConsumer(this, 'StatusEventConsumer', {
      eventBus: this.lifecycle.eventBus,
    });

    this.webhooks = new WebhookDelivery(this, 'Webhooks', {
      eventBus: this.lifecycle.eventBus,
      table: this.table.table,
      logRetention: config.logRetention,
    });

    this.api = new CreditTransferApi(this, 'Api', {
      stageName: config.stage,
      apiName: this.stackName,
      routes: ROUTES,
      gatewayResponses: GATEWAY_RESPONSES,
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
    });
    if (config.waf) {
      this.webAcl = new ApiWebAcl(this, 'WebAcl', {
        stageArn: this.api.restApi.deploymentStage.stageArn,
        metricPrefix: this.stackName,
      });
    }

    const resources: ServiceResources = {
      table: this.table.table,
      signingKey: this.signingKey,
      cursorKey: this.cursorKey.key,
      lifecycle: this.lifecycle.stateMachine,
      issuer: config.issuer,
      audience: config.audience,
    };
    for (const route of ROUTES) {
      bind(this.api.functionFor(route.operationId).function, ...routeBindings(route.operationId)(resources));
    }
    bind(this.api.authorizerFunction.function, ...AUTHORIZER_BINDINGS(resources));

    const functions = new Map<string, IFunction>([
      ['Authorizer', this.api.authorizerFunction.function],
      ...ROUTES.map((route): [string, IFunction] => [
        pascalCase(route.operationId),
        this.api.functionFor(route.operationId).function,
      ]),
      ...Object.entries(this.lifecycle.taskFunctions).map(([key, fn]): [string, IFunction] => [
        pascalCase(key),
        fn.function,
      ]),
      ['Reconciler', this.lifecycle.reconciler.function],
      ['WebhookIngest', this.webhooks.ingestFunction.function],
      ['WebhookDeliver', this.webhooks.deliverFunction.function],
    ]);
    this.monitoring = new Monitoring(this, 'Monitoring', {
      name: this.stackName,
      stage: this.api.restApi.deploymentStage,
      functions,
      authorizer: this.api.authorizerFunction.function,
      stateMachine: this.lifecycle.stateMachine,
      table: this.table.table,
      deadLetterQueues: new Map([
        ['StatusEventQueueDeadLetters', this.statusEventConsumer.queueDeadLetters],
        ['StatusEventRuleDeadLetters', this.statusEventConsumer.ruleDeadLetters],
        ['WebhookQueueDeadLetters', this.webhooks.queueDeadLetters],
        ['WebhookRuleDeadLetters', this.webhooks.ruleDeadLetters],
      ]),
      countAlarms: new Map([
        [
          'WebhookEndpointDisabled',
          {
            description: 'A webhook endpoint was disabled: it answered 410 Gone or failed for three days',
            metric: this.webhooks.endpointsDisabled,
          },
        ],
      ]),
      ...(config.alarmEmail !== undefined && { alarmEmail: config.alarmEmail }),
    });

    new CfnOutput(this, 'ApiUrl', { value: this.api.restApi.url, description: 'Base URL of the API stage' });
    if (this.api.domain) {
      new CfnOutput(this, 'CustomDomainTarget', {
        value: this.api.domain.domainNameAliasDomainName,
        description: `Point ${this.api.domain.domainName} here (CNAME, or alias A record in hosted zone ${this.api.domain.domainNameAliasHostedZoneId})`,
      });
    }
    new CfnOutput(this, 'Issuer', { value: config.issuer, description: 'The iss of the access tokens' });
    new CfnOutput(this, 'TableName', { value: this.table.table.tableName });
    new CfnOutput(this, 'LifecycleStateMachineArn', { value: this.lifecycle.stateMachine.stateMachineArn });
    new CfnOutput(this, 'StatusEventBusName', {
      value: this.lifecycle.eventBus.eventBusName,
      description: 'EventBridge bus of the CreditTransferStatusChanged events',
    });
    new CfnOutput(this, 'StatusEventQueueUrl', {
      value: this.statusEventConsumer.queue.queueUrl,
      description: 'The example consumer: every status change, as an SQS message',
    });
    new CfnOutput(this, 'SigningKeyId', {
      value: this.signingKey.newest.keyId,
      description: "The newest KMS key for the access tokens (the signing key generation's)",
    });
    new CfnOutput(this, 'SigningKeyIds', {
      value: this.signingKey.keyIds,
      description:
        'The KMS keys for the access tokens, oldest first: npm run keys -- rotate --signing-key-ids',
    });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.monitoring.topic.topicArn });
    if (this.connectorSecret) {
      new CfnOutput(this, 'ConnectorSecretArn', {
        value: this.connectorSecret.secretArn,
        description: 'HMAC key the workflow signs connector requests with',
      });
    }
  }

  /** A generated HMAC key, retained: the connector holds the same key, and losing it stops payments. */
  private createConnectorSecret(): Secret {
    const secret = new Secret(this, 'ConnectorSecret', {
      description: `HMAC key the credit transfer workflow (${this.stackName}) signs connector requests with`,
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The key is shared with the clearing connector, which must hold the new key before the workflow signs with it; rotation is a coordinated operator step (README "Rotating secrets"), not a Lambda rotation.',
    });
    return secret;
  }
}

const pascalCase = (name: string): string => name.charAt(0).toUpperCase() + name.slice(1);
