import { randomBytes } from 'node:crypto';
import { type Command, Option } from 'commander';
import { Webhook } from 'standardwebhooks';
import type { CreditTransfersClient } from '../client.ts';
import type {
  CreatedWebhookEndpoint,
  EventFilters,
  RotatedWebhookSecret,
  WebhookDeliveryAttempt,
  WebhookEndpoint,
  WebhookEvent,
  WebhookEventType,
} from '../types.ts';
import { type Format, formatRecord, formatRecords, LineWriter, type Row } from './output.ts';

/** What the webhook and event commands take from the program: the client and the global options. */
export interface CommandContext {
  client: () => CreditTransfersClient;
  format: () => Format;
  out: (text: string) => void;
  /** A mistake of the person running the command: one line, no stack. */
  usageError: (message: string) => Error;
  limitArgument: (text: string) => number;
  durationArgument: (text: string) => number;
}

export const EVENT_TYPES = [
  'credit-transfer.status-changed',
  'webhook-endpoint.disabled',
  'credit-transfer-batch.completed',
  'credit-transfer.approval-required',
  'credit-transfer.approved',
] as const satisfies readonly WebhookEventType[];
type MissingType = Exclude<WebhookEventType, (typeof EVENT_TYPES)[number]>;
const everyTypeListed: [MissingType] extends [never] ? true : MissingType = true;
void everyTypeListed;

/** Every field of an endpoint as the API names it: the CSV header. */
const ENDPOINT_FIELDS = [
  'id',
  'url',
  'status',
  'eventTypes',
  'description',
  'createdAt',
  'disabledAt',
  'disabledReason',
] as const satisfies readonly (keyof WebhookEndpoint)[];
type MissingEndpointField = Exclude<keyof WebhookEndpoint, (typeof ENDPOINT_FIELDS)[number]>;
const everyEndpointFieldListed: [MissingEndpointField] extends [never] ? true : MissingEndpointField = true;
void everyEndpointFieldListed;
const ENDPOINT_TABLE = ['id', 'url', 'status', 'eventTypes', 'description', 'createdAt'];

const ATTEMPT_FIELDS = [
  'attemptedAt',
  'eventId',
  'attempt',
  'outcome',
  'httpStatus',
  'error',
  'durationMs',
] as const satisfies readonly (keyof WebhookDeliveryAttempt)[];
type MissingAttemptField = Exclude<keyof WebhookDeliveryAttempt, (typeof ATTEMPT_FIELDS)[number]>;
const everyAttemptFieldListed: [MissingAttemptField] extends [never] ? true : MissingAttemptField = true;
void everyAttemptFieldListed;

/** An event's CSV columns: its envelope, and `data` as JSON. */
const EVENT_FIELDS = ['id', 'type', 'createdAt', 'data'];
/** A table shows a line per event: what happened in a few words. */
const EVENT_TABLE = ['createdAt', 'id', 'type', 'summary'];
const LISTEN_FIELDS = ['createdAt', 'id', 'type', 'forwarded', 'durationMs'];

/** `eventTypes` in one cell: the types space-separated. */
const endpointRow = (endpoint: object): Row => {
  const row = { ...endpoint } as Row;
  if (Array.isArray(row.eventTypes)) row.eventTypes = row.eventTypes.join(' ');
  return row;
};

const summaryOf = (event: WebhookEvent): string => {
  if (event.type === 'credit-transfer.status-changed') {
    const { paymentId, previousStatus, status, statusReason, statusReasonCode, sequence } = event.data;
    const reason = statusReason ? ` (${statusReason}${statusReasonCode ? ` ${statusReasonCode}` : ''})` : '';
    return `${paymentId} ${previousStatus ?? '-'} -> ${status}${reason} #${sequence}`;
  }
  if (event.type === 'credit-transfer-batch.completed') {
    const { batchId, groupStatus, count, countsByStatus } = event.data;
    const counts = Object.entries(countsByStatus).map(([status, n]) => `${status} ${n}`);
    return `batch ${batchId} completed ${groupStatus}: ${count} transfers (${counts.join(', ')})`;
  }
  if (event.type === 'credit-transfer.approval-required') {
    const { paymentId, approval } = event.data;
    return `${paymentId} waits for ${approval.approvalsRequired} approval(s) (${approval.rule}) until ${approval.expiresAt}`;
  }
  if (event.type === 'credit-transfer.approved') {
    const { paymentId, approval } = event.data;
    const approvers = approval.approvals.map((decision) => decision.clientId);
    return `${paymentId} approved by ${approvers.join(', ')}`;
  }
  return `endpoint ${event.data.endpointId} disabled (${event.data.reason})`;
};

const eventRow = (event: object): Row => ({ ...event, summary: summaryOf(event as WebhookEvent) });

/** The events filters, spelled exactly as the API's query parameters. */
const EVENT_FILTERS = ['paymentId.eq', 'createdAt.gte'] as const;

const eventFilters = (options: Record<string, unknown>): EventFilters => ({
  ...(typeof options.type === 'string' && { type: options.type as WebhookEventType }),
  ...Object.fromEntries(
    EVENT_FILTERS.filter((name) => typeof options[name] === 'string').map((name) => [name, options[name]]),
  ),
});

/** A new signing secret for one run of `listen`, as Standard Webhooks writes them. */
const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

/** How long `listen` waits for the local receiver, as the service does for an endpoint. */
const FORWARD_TIMEOUT_MS = 10_000;

const networkReason = (error: unknown): string => {
  if (error instanceof Error && error.name === 'TimeoutError')
    return `no answer within ${FORWARD_TIMEOUT_MS} ms`;
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
};

export const addWebhookCommands = (program: Command, context: CommandContext): void => {
  const { out } = context;
  const webhooks = program
    .command('webhooks')
    .description(
      'webhook endpoints: create, list, delete, rotate-secret, deliveries (scope webhooks:manage)',
    );

  webhooks
    .command('create')
    .description('register an endpoint; prints its signing secret, this once only')
    .requiredOption('--url <url>', 'where events are sent (https, a public host)')
    .option('--description <text>', 'what the endpoint is for')
    .addOption(
      new Option('--event-type <type...>', 'only these event types (default: every type)').choices(
        EVENT_TYPES,
      ),
    )
    .action(async (options: { url: string; description?: string; eventType?: WebhookEventType[] }) => {
      const created: CreatedWebhookEndpoint = await context.client().webhooks.create({
        url: options.url,
        ...(options.description !== undefined && { description: options.description }),
        ...(options.eventType !== undefined && { eventTypes: options.eventType }),
      });
      out(
        formatRecord(
          context.format(),
          created,
          [...ENDPOINT_FIELDS, 'secret'],
          [...ENDPOINT_TABLE, 'secret'],
          endpointRow,
        ),
      );
      process.stderr.write('Keep the secret: it is shown this once only.\n');
    });

  webhooks
    .command('list')
    .description('list endpoints, oldest first')
    .option('--limit <n>', 'page size (1..100)', context.limitArgument)
    .option('--cursor <cursor>', 'start at this page (Pagination-Cursor of the previous one)')
    .option('--all', 'follow every cursor to the last page')
    .action(async (options: { limit?: number; cursor?: string; all?: boolean }) => {
      const client = context.client();
      const paging = { ...(options.limit !== undefined && { limit: options.limit }) };
      if (options.all) {
        const endpoints: WebhookEndpoint[] = [];
        for await (const endpoint of client.webhooks.list(paging)) endpoints.push(endpoint);
        out(formatRecords(context.format(), endpoints, ENDPOINT_FIELDS, ENDPOINT_TABLE, endpointRow));
        return;
      }
      const page = await client.webhooks.listPage({
        ...paging,
        ...(options.cursor !== undefined && { cursor: options.cursor }),
      });
      out(formatRecords(context.format(), page.items, ENDPOINT_FIELDS, ENDPOINT_TABLE, endpointRow));
      if (page.cursor !== '') process.stderr.write(`More endpoints: --cursor ${page.cursor} (or --all)\n`);
    });

  webhooks
    .command('delete')
    .description('delete an endpoint: nothing more is sent to it')
    .argument('<id>')
    .action(async (id: string) => {
      await context.client().webhooks.delete(id);
      out(formatRecord(context.format(), { id, deleted: true }, ['id', 'deleted']));
    });

  webhooks
    .command('rotate-secret')
    .description('a new signing secret; the old one keeps signing beside it for 24 hours')
    .argument('<id>')
    .action(async (id: string) => {
      const rotated: RotatedWebhookSecret = await context.client().webhooks.rotateSecret(id);
      out(
        formatRecord(
          context.format(),
          rotated,
          [...ENDPOINT_FIELDS, 'secret', 'previousSecretExpiresAt'],
          ['id', 'secret', 'previousSecretExpiresAt'],
          endpointRow,
        ),
      );
      process.stderr.write('Keep the secret: it is shown this once only.\n');
    });

  webhooks
    .command('deliveries')
    .description('the latest delivery attempts to an endpoint, newest first')
    .argument('<id>')
    .option('--limit <n>', 'attempts to show (1..100)', context.limitArgument)
    .action(async (id: string, options: { limit?: number }) => {
      const attempts = await context
        .client()
        .webhooks.deliveries(id, { ...(options.limit !== undefined && { limit: options.limit }) });
      out(formatRecords(context.format(), attempts, ATTEMPT_FIELDS));
    });

  const events = program
    .command('events')
    .description(
      "list events, oldest first (recent ones at once); --follow prints new ones as they come; filters as the API's query parameters",
    )
    .addOption(new Option('--type <type>', 'only events of this type').choices(EVENT_TYPES))
    .option('--limit <n>', 'page size (1..100)', context.limitArgument)
    .option('--cursor <cursor>', 'start at this page (Pagination-Cursor of the previous one)')
    .option('--all', 'follow every cursor to the last page')
    .option(
      '--follow',
      'print each new event as it is listed, until interrupted (from --createdAt.gte, or now)',
    )
    .option(
      '--interval <duration>',
      'with --follow: pause between looks for new events (default 2s)',
      context.durationArgument,
    );
  for (const filter of EVENT_FILTERS) events.option(`--${filter} <value>`, `filter ${filter}`);
  events.action(async (options: Record<string, string | number | boolean | undefined>) => {
    const client = context.client();
    const format = context.format();
    const filters = eventFilters(options);
    const paging = { ...(typeof options.limit === 'number' && { limit: options.limit }) };
    if (options.follow) {
      const writer = new LineWriter(format, format === 'csv' ? EVENT_FIELDS : EVENT_TABLE, out);
      for await (const event of client.events.follow(filters, {
        ...paging,
        ...(typeof options.interval === 'number' && { intervalMs: options.interval }),
      }))
        writer.line(format === 'table' ? eventRow(event) : event);
      return;
    }
    if (options.all) {
      const all: WebhookEvent[] = [];
      for await (const event of client.events.list(filters, paging)) all.push(event);
      out(formatRecords(format, all, EVENT_FIELDS, EVENT_TABLE, eventRow));
      return;
    }
    const page = await client.events.listPage(filters, {
      ...paging,
      ...(typeof options.cursor === 'string' && { cursor: options.cursor }),
    });
    out(formatRecords(format, page.items, EVENT_FIELDS, EVENT_TABLE, eventRow));
    if (page.cursor !== '') process.stderr.write(`More events: --cursor ${page.cursor} (or --all)\n`);
  });

  program
    .command('listen')
    .description(
      'follow the events and forward each to a local receiver, signed (Standard Webhooks) with a secret made for this run and printed at start',
    )
    .requiredOption('--forward-to <url>', 'where each event is POSTed, e.g. http://localhost:3000/webhooks')
    .addOption(new Option('--type <type>', 'only events of this type').choices(EVENT_TYPES))
    .option(
      '--interval <duration>',
      'pause between looks for new events (default 2s)',
      context.durationArgument,
    )
    .addHelpText(
      'after',
      '\nEvents recorded from now on are forwarded (each as soon as the events list shows it, at once),\n' +
        'with the headers webhook-id, webhook-timestamp and webhook-signature; verify them with the secret\n' +
        'printed at start (verifyWebhook, or any Standard Webhooks library). A receiver that fails is not\n' +
        'retried: the line says what it answered. Ctrl-C stops.',
    )
    .action(async (options: { forwardTo: string; type?: WebhookEventType; interval?: number }) => {
      if (!URL.canParse(options.forwardTo) || !/^https?:$/.test(new URL(options.forwardTo).protocol))
        throw context.usageError(`--forward-to is not an http(s) URL: ${options.forwardTo}`);
      const client = context.client();
      const secret = newSecret();
      const signer = new Webhook(secret);
      process.stderr.write(
        `Ready: forwarding events to ${options.forwardTo} (Ctrl-C to stop). Webhook signing secret: ${secret}\n`,
      );
      const writer = new LineWriter(context.format(), LISTEN_FIELDS, out);
      for await (const event of client.events.follow(
        { ...(options.type !== undefined && { type: options.type }) },
        { ...(options.interval !== undefined && { intervalMs: options.interval }) },
      )) {
        const body = JSON.stringify(event);
        const sentAt = new Date();
        const started = performance.now();
        let forwarded: string;
        try {
          const response = await fetch(options.forwardTo, {
            method: 'POST',
            headers: {
              'Content-Type': 'application/json',
              'webhook-id': event.id,
              'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
              'webhook-signature': signer.sign(event.id, sentAt, body),
            },
            body,
            redirect: 'manual',
            signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
          });
          await response.body?.cancel();
          forwarded = String(response.status);
        } catch (error) {
          forwarded = 'failed';
          process.stderr.write(
            `Forwarding event ${event.id} to the receiver (POST ${options.forwardTo}) failed: ${networkReason(error)}\n`,
          );
        }
        writer.line({
          createdAt: event.createdAt,
          id: event.id,
          type: event.type,
          forwarded,
          durationMs: Math.round(performance.now() - started),
        });
      }
    });
};
