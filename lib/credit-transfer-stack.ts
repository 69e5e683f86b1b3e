import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { ROUTES } from '#routes';
import { GATEWAY_RESPONSES } from '#shared/gateway-responses';
import { CreditTransferApi } from './constructs/api.ts';
import { ListCursorKey } from './constructs/cursor-key.ts';
import { bind } from './constructs/function-defaults.ts';
import { CreditTransferLifecycle } from './constructs/lifecycle-workflow.ts';
import { TokenSigningKey } from './constructs/signing-key.ts';
import { CreditTransferTable } from './constructs/table.ts';
import { AUTHORIZER_BINDINGS, routeBindings, type ServiceResources } from './function-bindings.ts';

export interface CreditTransferStackProps extends StackProps {
  /** The REST API stage. */
  readonly stageName: string;
  /** The tokens' `iss`; by default the stage's execute-api URL. */
  readonly issuer?: string;
  /** The tokens' `aud`. */
  readonly audience: string;
}

export class CreditTransferStack extends Stack {
  readonly table: CreditTransferTable;
  readonly signingKey: TokenSigningKey;
  readonly cursorKey: ListCursorKey;
  readonly api: CreditTransferApi;
  readonly lifecycle: CreditTransferLifecycle;

  constructor(scope: Construct, id: string, props: CreditTransferStackProps) {
    super(scope, id, props);

    this.table = new CreditTransferTable(this, 'CreditTransfers');
    this.signingKey = new TokenSigningKey(this, 'TokenSigningKey');
    this.cursorKey = new ListCursorKey(this, 'ListCursorKey');
    this.lifecycle = new CreditTransferLifecycle(this, 'Lifecycle', { table: this.table.table });
    this.api = new CreditTransferApi(this, 'Api', {
      stageName: props.stageName,
      routes: ROUTES,
      gatewayResponses: GATEWAY_RESPONSES,
    });

    // Built from the API id, not api.url: a function's environment that names the deployment
    // would make the deployment depend on the function and the function on the deployment.
    const issuer =
      props.issuer ??
      `https://${this.api.restApi.restApiId}.execute-api.${this.region}.${this.urlSuffix}/${props.stageName}`;
    const resources: ServiceResources = {
      table: this.table.table,
      signingKey: this.signingKey.key,
      cursorKey: this.cursorKey.key,
      lifecycle: this.lifecycle.stateMachine,
      issuer,
      audience: props.audience,
    };

    for (const route of ROUTES) {
      bind(this.api.functionFor(route.operationId).function, ...routeBindings(route.operationId)(resources));
    }
    bind(this.api.authorizerFunction.function, ...AUTHORIZER_BINDINGS(resources));

    new CfnOutput(this, 'ApiUrl', { value: this.api.restApi.url, description: 'Base URL of the API stage' });
    new CfnOutput(this, 'Issuer', { value: issuer, description: 'The iss of the access tokens' });
    new CfnOutput(this, 'TableName', { value: this.table.table.tableName });
    new CfnOutput(this, 'LifecycleStateMachineArn', { value: this.lifecycle.stateMachine.stateMachineArn });
    new CfnOutput(this, 'StatusEventBusName', {
      value: this.lifecycle.eventBus.eventBusName,
      description: 'EventBridge bus of the CreditTransferStatusChanged events',
    });
    new CfnOutput(this, 'SigningKeyId', {
      value: this.signingKey.key.keyId,
      description: 'KMS key that signs the access tokens',
    });
  }
}
