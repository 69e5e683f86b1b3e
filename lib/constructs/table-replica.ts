import { Aws, Stack, Validations } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { AwsCustomResource, AwsCustomResourcePolicy, PhysicalResourceId } from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { acknowledgeCustomResourceProvider } from './custom-resource-provider.ts';
import { DATA_KEY_ACTIONS } from './key-policy.ts';
import { nagRendered } from './nag-finding.ts';

/**
 * The alias of the key the replica is encrypted with, made by the recovery stack in the backup
 * region (a customer managed key is regional: a replica needs one of its own region).
 */
export const tableReplicaKeyAliasOf = (stackName: string): string => `alias/${stackName}-table-replica`;

export interface TableReplicaProps {
  /** The table: its stream must carry new and old images (global tables replicate from it). */
  readonly table: Table;
  /** Where the replica lives (the stage's backup region). */
  readonly region: string;
  /**
   * The table's customer managed key, when it has one: the replica is then encrypted with the key
   * `tableReplicaKeyAliasOf(stack)` in its region. Absent: the AWS managed key there, as here.
   */
  readonly tableKey?: IKey;
}

/**
 * A replica of the table in another region (DynamoDB global tables, version 2019.11.21), added
 * to the existing `AWS::DynamoDB::Table` with UpdateTable: the table stays the resource it is,
 * so turning this on neither replaces nor moves a single item. CDK's own `replicationRegions`
 * does the same but refuses a customer managed key (its handler cannot name the replica's key),
 * which `prod` uses: this one names it.
 *
 * Created once; nothing happens on delete, so the replica stays when the option or the stack
 * goes, as the table does (docs/operations.md says how to remove it). DynamoDB builds the replica
 * after the deployment returns (minutes to hours, by the table's size).
 */
export class TableReplica extends Construct {
  constructor(scope: Construct, id: string, props: TableReplicaProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const { table, region } = props;
    const keyAlias = tableReplicaKeyAliasOf(stack.stackName);
    const replicaTableArn = stack.formatArn({
      service: 'dynamodb',
      region,
      resource: 'table',
      resourceName: table.tableName,
    });

    /** Keys of the backup region, narrowed by their alias where granted. */
    const regionKeys = stack.formatArn({ service: 'kms', region, resource: 'key', resourceName: '*' });

    const replica = new AwsCustomResource(this, 'Replica', {
      onCreate: {
        service: 'DynamoDB',
        action: 'updateTable',
        parameters: {
          TableName: table.tableName,
          ReplicaUpdates: [
            {
              Create: {
                RegionName: region,
                ...(props.tableKey !== undefined && {
                  KMSMasterKeyId: `arn:${Aws.PARTITION}:kms:${region}:${Aws.ACCOUNT_ID}:${keyAlias}`,
                }),
              },
            },
          ],
        },
        physicalResourceId: PhysicalResourceId.of(`${region}-replica`),
      },
      installLatestAwsSdk: false,
      policy: AwsCustomResourcePolicy.fromStatements([
        new PolicyStatement({
          actions: ['dynamodb:UpdateTable', 'dynamodb:DescribeTable'],
          resources: [table.tableArn],
        }),
        // What DynamoDB asks of whoever adds a replica, on the replica (AWS's "global tables security").
        new PolicyStatement({
          actions: [
            'dynamodb:CreateTable',
            'dynamodb:CreateTableReplica',
            'dynamodb:DescribeTable',
            'dynamodb:Scan',
            'dynamodb:Query',
            'dynamodb:UpdateItem',
            'dynamodb:PutItem',
            'dynamodb:GetItem',
            'dynamodb:DeleteItem',
            'dynamodb:BatchWriteItem',
          ],
          resources: [replicaTableArn],
        }),
        // Made by DynamoDB the first time an account replicates a table.
        new PolicyStatement({
          actions: ['iam:CreateServiceLinkedRole'],
          resources: [
            stack.formatArn({
              service: 'iam',
              region: '',
              resource: 'role',
              resourceName:
                'aws-service-role/replication.dynamodb.amazonaws.com/AWSServiceRoleForDynamoDBReplication',
            }),
          ],
        }),
        ...(props.tableKey === undefined
          ? []
          : [
              // DynamoDB uses both keys on the caller's behalf; their policies allow it only
              // through DynamoDB.
              new PolicyStatement({
                actions: [...DATA_KEY_ACTIONS],
                resources: [props.tableKey.keyArn],
              }),
              new PolicyStatement({
                actions: [...DATA_KEY_ACTIONS],
                resources: [regionKeys],
                conditions: { 'ForAnyValue:StringEquals': { 'kms:ResourceAliases': keyAlias } },
              }),
            ]),
      ]),
    });
    // After the table's own update in the same deployment (a new index, the stream).
    replica.node.addDependency(table);

    const reason =
      'The replica key is known by its alias only (it is made by the recovery stack in the backup region): the statement is limited to keys of that region carrying the alias.';
    Validations.of(replica).acknowledge(
      {
        id: `AwsSolutions-IAM5[Resource::${nagRendered(stack, regionKeys)}]`,
        reason,
      },
      {
        id: 'AwsSolutions-IAM5[Action::kms:GenerateDataKey*]',
        reason: 'DynamoDB generates data keys of both keys for the replica.',
      },
      {
        id: 'AwsSolutions-IAM5[Action::kms:ReEncrypt*]',
        reason: 'DynamoDB re-encrypts between the two keys for the replica.',
      },
    );
    acknowledgeCustomResourceProvider(stack);
  }
}
