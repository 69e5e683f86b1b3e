import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { BATCH_LIFECYCLES_ENTRY } from '#workflow/task-functions';
import { BATCH_START_TIMEOUT_SECONDS } from '../concurrency.ts';
import { BATCH_LIFECYCLES_BINDINGS } from '../function-bindings.ts';
import { bind, ServiceFunction } from './function-defaults.ts';

export interface BatchLifecyclesProps {
  readonly table: ITable;
  readonly lifecycle: IStateMachine;
  /** The lifecycle's publish step function: announces the transfers held for approval. */
  readonly statusPublisher: IFunction;
  /** The pace of a batch's starts (lib/concurrency.ts, batchStartsPerSecond). */
  readonly startsPerSecond: number;
  /** @default three months */
  readonly logRetention?: RetentionDays;
}

/**
 * The function that starts a stored batch's lifecycles, invoked asynchronously by the batch
 * request so that its 202 never waits for 2,000 starts. Lambda retries a failed run twice within
 * the hour (a repeat starts nothing twice); a run that failed for good lands in the dead-letter
 * queue, and its transfers are started by the reconciler all the same.
 */
export class BatchLifecycles extends Construct {
  readonly function: ServiceFunction;
  readonly deadLetters: Queue;

  constructor(scope: Construct, id: string, props: BatchLifecyclesProps) {
    super(scope, id);
    this.function = new ServiceFunction(this, 'StartBatchLifecyclesFunction', {
      entry: BATCH_LIFECYCLES_ENTRY,
      description: "Batches: starts the lifecycles of a stored batch's transfers, after the request answered",
      logRetention: props.logRetention,
      // A largest batch's paced starts take 240 s at most (BATCH_START_MAX_SECONDS): 80% of it.
      timeout: Duration.seconds(BATCH_START_TIMEOUT_SECONDS),
    });
    this.function.function.addEnvironment('BATCH_STARTS_PER_SECOND', String(props.startsPerSecond));
    bind(
      this.function.function,
      ...BATCH_LIFECYCLES_BINDINGS(props.table, props.lifecycle, props.statusPublisher),
    );

    const reason =
      'A dead-letter queue itself: it keeps the batch references whose lifecycle starts failed for good (the reconciler starts those transfers anyway); it is read by an operator, never by a function.';
    this.deadLetters = new Queue(this, 'DeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(this.deadLetters).acknowledge(
      { id: 'AwsSolutions-SQS3', reason },
      { id: 'cdk-validator-cfnguard::sqs_dlq_check', reason },
    );
    this.function.function.configureAsyncInvoke({
      retryAttempts: 2,
      // Past an hour the reconciler has long started them: a late run would only repeat its work.
      maxEventAge: Duration.hours(1),
      onFailure: new SqsDestination(this.deadLetters),
    });
  }
}
