import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import {
  AttributeType,
  BillingMode,
  ProjectionType,
  StreamViewType,
  Table,
  TableEncryption,
} from 'aws-cdk-lib/aws-dynamodb';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { TABLE_DEFINITION } from '#adapters/table/table-definition';
import { DATA_KEY_ACTIONS, keyPolicy } from './key-policy.ts';
import { TableReplica } from './table-replica.ts';

export interface CreditTransferTableProps {
  /**
   * Encrypt with a customer managed key of this stack (rotated yearly, retained) instead of the
   * AWS managed key: for key policies and key-level audit of their own. @default false
   */
  readonly customerManagedKey?: boolean;
  /**
   * A global table replica in this region (`-c tableReplica=true`, in the backup region). It turns
   * the table's stream on (new and old images), which global tables replicate from.
   */
  readonly replicaRegion?: string;
}

/**
 * The service's one DynamoDB table, built from the same definition the local runtime uses.
 * It holds money movements: on-demand, point-in-time recovery, deletion protection, retained
 * when the stack goes. Time to live removes the items that carry an expiry (throttle counters).
 */
export class CreditTransferTable extends Construct {
  readonly table: Table;
  readonly encryptionKey?: Key;

  constructor(scope: Construct, id: string, props: CreditTransferTableProps = {}) {
    super(scope, id);
    const { partitionKey, sortKey, indexes, timeToLiveAttribute } = TABLE_DEFINITION;

    if (props.customerManagedKey) {
      this.encryptionKey = new Key(this, 'Key', {
        description: 'Encrypts the credit transfer table',
        enableKeyRotation: true,
        // Without the key the retained table and its backups cannot be read.
        removalPolicy: RemovalPolicy.RETAIN,
        pendingWindow: Duration.days(30),
        // Principals of the account use it only through DynamoDB, as far as IAM lets them.
        policy: keyPolicy(this, {
          throughServices: {
            actions: DATA_KEY_ACTIONS,
            services: ['dynamodb'],
          },
        }),
      });
    }

    this.table = new Table(this, 'Table', {
      partitionKey: { name: partitionKey, type: AttributeType.STRING },
      sortKey: { name: sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
      timeToLiveAttribute,
      // Only with a replica: a stream on the table changes nothing else (an update in place).
      ...(props.replicaRegion !== undefined && { stream: StreamViewType.NEW_AND_OLD_IMAGES }),
      ...(this.encryptionKey === undefined
        ? { encryption: TableEncryption.AWS_MANAGED }
        : { encryption: TableEncryption.CUSTOMER_MANAGED, encryptionKey: this.encryptionKey }),
    });

    for (const index of indexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.indexName,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        ...(index.include === undefined
          ? { projectionType: ProjectionType.ALL }
          : { projectionType: ProjectionType.INCLUDE, nonKeyAttributes: [...index.include] }),
      });
    }

    if (props.replicaRegion !== undefined) {
      new TableReplica(this, 'Replica', {
        table: this.table,
        region: props.replicaRegion,
        ...(this.encryptionKey !== undefined && { tableKey: this.encryptionKey }),
      });
    }
  }
}
