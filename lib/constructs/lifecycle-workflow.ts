import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { type Archive, EventBus } from 'aws-cdk-lib/aws-events';
import {
  AnyPrincipal,
  Effect,
  Grant,
  type IGrantable,
  PolicyStatement,
  Role,
  ServicePrincipal,
} from 'aws-cdk-lib/aws-iam';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { CfnSchedule } from 'aws-cdk-lib/aws-scheduler';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { EVENT_SOURCE } from '#adapters/credit-transfers/event-publisher';
import { RECOVERY_INDEX } from '#adapters/table/table-definition';
import {
  LIFECYCLE_ASL_FILE,
  LONG_WAITS_ASL_FILE,
  LONG_WAITS_SUBSTITUTION,
  RECONCILER_ENTRY,
  WORKFLOW_FUNCTIONS,
} from '#workflow/task-functions';
import {
  CONNECTOR_CALLS_PER_INVOCATION,
  connectorDeadlineMs,
  KEY_PREFIXES,
  pendingAnnouncement,
  type RailBinding,
  TASKS_CALLING_THE_RAIL,
  tableAccess,
  workflowAccess,
} from '../function-bindings.ts';
import { bind, PROJECT_ROOT, ServiceFunction } from './function-defaults.ts';

/** The reconciler's count of transfers not final past their bound, as Powertools Metrics emits it. */
export const TRANSFERS_STUCK_METRIC = {
  namespace: 'CreditTransfers',
  name: 'TransfersStuck',
  service: 'credit-transfers',
} as const;

export interface CreditTransferLifecycleProps {
  readonly table: ITable;
  /** The rail's environment and grants: RAIL for every function, the connector for its callers. */
  readonly rail: RailBinding;
  /** Names the execution log group, unique per stage: `/aws/vendedlogs/states/<name>`. */
  readonly name: string;
  /** How long the event bus archive keeps events for replay. @default one year */
  readonly archiveRetention?: Duration;
  /** How often the reconciler looks for transfers that stopped progressing. @default 5 minutes */
  readonly reconcileEvery?: Duration;
  /** Environment of the workflow functions: the sandbox rail's delays and the polling settings. */
  readonly settings?: Readonly<Record<string, string>>;
  /** @default three months */
  readonly logRetention?: RetentionDays;
  /** What the execution logs record (never execution data). @default LogLevel.ALL */
  readonly logLevel?: LogLevel;
}

/**
 * The credit transfer lifecycle: its two state machines from the ASL files the local runtime also
 * runs (the EXPRESS fast path every transfer starts on, and the STANDARD one of long waits it hands
 * a value-date hold or slow clearing to), their task functions, the event bus that carries status
 * changes, and the reconciler on an EventBridge Scheduler schedule.
 */
export class CreditTransferLifecycle extends Construct {
  /** The fast path (EXPRESS): what the initiation, the cancellation, the batches and the reconciler start. */
  readonly stateMachine: StateMachine;
  /** Long waits (STANDARD): started by the fast path only. */
  readonly longWaits: StateMachine;
  readonly eventBus: EventBus;
  readonly archive: Archive;
  readonly taskFunctions: Readonly<Record<keyof typeof WORKFLOW_FUNCTIONS, ServiceFunction>>;
  readonly reconciler: ServiceFunction;
  readonly schedule: CfnSchedule;

  constructor(scope: Construct, id: string, props: CreditTransferLifecycleProps) {
    super(scope, id);
    const logRetention = props.logRetention ?? RetentionDays.THREE_MONTHS;
    const settings = props.settings ?? {};

    this.eventBus = new EventBus(this, 'StatusEvents', {
      description:
        'CreditTransferStatusChanged events, one per status change (detail.eventId for deduplication)',
    });
    // Every event the bus carries, kept for replay to a consumer that lost or mishandled some.
    this.archive = this.eventBus.archive('Archive', {
      description: 'Every credit transfer status event, for replay',
      eventPattern: { account: [Stack.of(this).account] },
      retention: props.archiveRetention ?? Duration.days(365),
    });
    // Both outlive the stack: the archive is the record of every status event, replayable only
    // into the bus it came from.
    this.eventBus.applyRemovalPolicy(RemovalPolicy.RETAIN);
    this.archive.applyRemovalPolicy(RemovalPolicy.RETAIN);

    const taskFunction = (key: keyof typeof WORKFLOW_FUNCTIONS): ServiceFunction => {
      const { entry, description } = WORKFLOW_FUNCTIONS[key];
      const fn = new ServiceFunction(this, `${key.charAt(0).toUpperCase()}${key.slice(1)}Function`, {
        entry,
        description,
        logRetention,
      });
      // Every step reads the transfer and moves it by a conditional update, and touches no other
      // partition (the rail callers on the sandbox also its clearing records: railCallers).
      bind(
        fn.function,
        tableAccess(props.table, ['GetItem', 'UpdateItem'], [KEY_PREFIXES.creditTransfers]),
        { environment: settings },
        props.rail.everyFunction,
        ...(TASKS_CALLING_THE_RAIL[key] ? [props.rail.railCallers] : []),
      );
      if (TASKS_CALLING_THE_RAIL[key]) {
        const timeout = (fn.function.timeout as Duration).toMilliseconds();
        fn.function.addEnvironment(
          'CONNECTOR_DEADLINE_MS',
          String(connectorDeadlineMs(timeout, CONNECTOR_CALLS_PER_INVOCATION[key])),
        );
      }
      return fn;
    };
    this.taskFunctions = {
      validateCheckAndSubmit: taskFunction('validateCheckAndSubmit'),
      submitToClearing: taskFunction('submitToClearing'),
      pollClearing: taskFunction('pollClearing'),
      publishStatusEvents: taskFunction('publishStatusEvents'),
      parkTransfer: taskFunction('parkTransfer'),
    };
    // Status events, and the event that announces a parked transfer.
    const publishes = {
      environment: { EVENT_BUS_NAME: this.eventBus.eventBusName },
      grant: (grantee: IGrantable) => this.eventBus.grantPutEventsTo(grantee),
    };
    bind(
      this.taskFunctions.publishStatusEvents.function,
      publishes,
      // Counts a batch's final transfer on the batch item (a conditional update), reads it to finish its outcome.
      tableAccess(props.table, ['GetItem', 'UpdateItem'], [KEY_PREFIXES.batches]),
      // Gives back what a transfer that ended Rejected or Cancelled counted against limits.
      tableAccess(props.table, ['UpdateItem'], [KEY_PREFIXES.limitUsage]),
    );
    bind(this.taskFunctions.parkTransfer.function, publishes);
    // No one else in the account puts status events (source credit-transfers) on the bus, whatever
    // their IAM policies allow: such an event becomes a signed webhook. Other sources (the clients
    // tool's audit events) stay open to IAM. The readers check every status event against the
    // table all the same (lambdas/domain/webhooks/status-event-check.ts).
    this.eventBus.addToResourcePolicy(
      new PolicyStatement({
        sid: 'OnlyThePublisherPutsStatusEvents',
        effect: Effect.DENY,
        principals: [new AnyPrincipal()],
        actions: ['events:PutEvents'],
        resources: [this.eventBus.eventBusArn],
        conditions: {
          ArnNotEquals: {
            'aws:PrincipalArn': (this.taskFunctions.publishStatusEvents.function.role as Role).roleArn,
          },
          // events:source is multivalued (one value per entry of the call): a set operator, so a
          // call that mixes a status event with others is denied too.
          'ForAnyValue:StringEquals': { 'events:source': EVENT_SOURCE },
        },
      }),
    );

    // Under /aws/vendedlogs/ Step Functions' log delivery needs no resource policy per log group
    // (the account's policy size limit would otherwise cap the number of state machines).
    const logGroup = (id: string, suffix: string) =>
      new LogGroup(this, id, {
        logGroupName: `/aws/vendedlogs/states/${props.name}${suffix}`,
        retention: logRetention,
        removalPolicy: RemovalPolicy.RETAIN,
      });
    const logLevel = props.logLevel ?? LogLevel.ALL;
    const machine = (
      id: string,
      type: StateMachineType,
      file: string,
      logs: LogGroup,
      more: Record<string, string> = {},
    ): StateMachine => {
      // The ASL file as it is, inline (no asset to upload), the ARNs filled in by CloudFormation.
      const definition = readFileSync(join(PROJECT_ROOT, file), 'utf8');
      const used = Object.entries(WORKFLOW_FUNCTIONS).filter(([, fn]) =>
        definition.includes(`\${${fn.substitution}}`),
      );
      const stateMachine = new StateMachine(this, id, {
        stateMachineType: type,
        comment:
          type === StateMachineType.EXPRESS
            ? 'Credit transfer lifecycle: the fast path'
            : 'Credit transfer lifecycle: long waits (value-date holds, slow clearing)',
        definitionBody: DefinitionBody.fromString(definition),
        definitionSubstitutions: {
          ...Object.fromEntries(
            used.map(([key, fn]) => [
              fn.substitution,
              this.taskFunctions[key as keyof typeof WORKFLOW_FUNCTIONS].function.functionArn,
            ]),
          ),
          ...more,
        },
        tracingEnabled: true,
        // No input or output: those stay identifiers only, still they are not logged. On prod only
        // failures: for the fast path (Express keeps no execution history) these logs are all an
        // operator has of an execution, so every failed step and execution is in them.
        logs: { destination: logs, level: logLevel, includeExecutionData: false },
      });
      for (const [key] of used) {
        // The unqualified ARN is what the Task states name: no version or alias wildcard.
        Grant.addToPrincipal({
          grantee: stateMachine,
          actions: ['lambda:InvokeFunction'],
          resourceArns: [this.taskFunctions[key as keyof typeof WORKFLOW_FUNCTIONS].function.functionArn],
        });
      }
      if (logLevel !== LogLevel.ALL) {
        Validations.of(stateMachine).acknowledge({
          id: 'AwsSolutions-SF1',
          reason:
            'On prod the execution logs keep failures only (workflowLogLevel): logging every event was half of the log cost of a transfer. Every failed step and execution is logged; the long waits keep their execution history in the console too.',
        });
      }
      Validations.of(stateMachine).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'Step Functions delivers execution logs through CloudWatch Logs vended delivery (logs:CreateLogDelivery, ' +
          'logs:*LogDelivery*, logs:PutResourcePolicy, logs:Describe*) and traces to X-Ray (xray:PutTraceSegments, ' +
          'xray:PutTelemetryRecords, xray:GetSampling*); none of these support resource-level permissions. ' +
          'Its Lambda invocations name each function ARN (asserted in test/infra).',
      });
      return stateMachine;
    };
    // The construct id of the state machine of old, kept: a deployment leaves the executions
    // waiting in it (value-date holds) running.
    this.longWaits = machine(
      'StateMachine',
      StateMachineType.STANDARD,
      LONG_WAITS_ASL_FILE,
      logGroup('ExecutionLogs', ''),
    );
    this.stateMachine = machine(
      'FastPath',
      StateMachineType.EXPRESS,
      LIFECYCLE_ASL_FILE,
      logGroup('FastPathExecutionLogs', '-fast-path'),
      { [LONG_WAITS_SUBSTITUTION]: this.longWaits.stateMachineArn },
    );
    // The hand-over (states:startExecution, not .sync): StartExecution on that one machine only.
    Grant.addToPrincipal({
      grantee: this.stateMachine,
      actions: ['states:StartExecution'],
      resourceArns: [this.longWaits.stateMachineArn],
    });

    this.reconciler = new ServiceFunction(this, 'ReconcilerFunction', {
      entry: RECONCILER_ENTRY,
      description: 'Lifecycle: drives on credit transfers that stopped progressing',
      logRetention,
      timeout: Duration.minutes(2),
    });
    bind(
      this.reconciler.function,
      // Finds due transfers on the recovery index, then reads and moves each transfer.
      tableAccess(props.table, ['Query'], [KEY_PREFIXES.recovery], [RECOVERY_INDEX.indexName]),
      tableAccess(props.table, ['GetItem', 'UpdateItem'], [KEY_PREFIXES.creditTransfers]),
      // Counts a transfer its initiation left half counted against limits (read to explain a refusal).
      tableAccess(props.table, ['GetItem', 'UpdateItem'], [KEY_PREFIXES.limitUsage]),
      workflowAccess(this.stateMachine),
      // Announces a held transfer whose change to Pending is still unpublished (no workflow for it).
      pendingAnnouncement(this.taskFunctions.publishStatusEvents.function),
      // Parks transfers that had their last attempt, and announces each.
      publishes,
      // Its TransfersStuck metric: namespace CreditTransfers, dimension service=credit-transfers.
      {
        environment: {
          ...settings,
          POWERTOOLS_METRICS_NAMESPACE: TRANSFERS_STUCK_METRIC.namespace,
          POWERTOOLS_SERVICE_NAME: TRANSFERS_STUCK_METRIC.service,
        },
      },
      props.rail.everyFunction,
      props.rail.railCallers,
    );

    // Scheduler's role may invoke exactly the reconciler (the L2 target would grant `:*` too).
    const schedulerRole = new Role(this, 'SchedulerRole', {
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com'),
      description: 'EventBridge Scheduler invokes the lifecycle reconciler',
    });
    Grant.addToPrincipal({
      grantee: schedulerRole,
      actions: ['lambda:InvokeFunction'],
      resourceArns: [this.reconciler.function.functionArn],
    });
    this.schedule = new CfnSchedule(this, 'ReconcileSchedule', {
      description: 'Runs the credit transfer lifecycle reconciler',
      scheduleExpression: `rate(${(props.reconcileEvery ?? Duration.minutes(5)).toMinutes()} minutes)`,
      flexibleTimeWindow: { mode: 'OFF' },
      target: {
        arn: this.reconciler.function.functionArn,
        roleArn: schedulerRole.roleArn,
        input: '{}',
        // A missed run is made good by the next one.
        retryPolicy: { maximumRetryAttempts: 2, maximumEventAgeInSeconds: 240 },
      },
    });
    // The invoke permission exists before the first run.
    this.schedule.node.addDependency(schedulerRole);
  }
}
