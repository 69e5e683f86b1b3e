import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbClientStore } from '#adapters/access/client-store';
import { registerClient } from '#domain/access/register-client';
import { minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { callApi, requestToken } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';

const BATCHES = '/v1/payments/credit-transfer-batches';
const TRANSFERS = '/v1/payments/credit-transfers';
const SECRET = 'list-batches-secret-0123456789';

const service = useLocalService();
let clients: DynamoDbClientStore;

beforeAll(() => {
  clients = new DynamoDbClientStore(service.table, 'credit-transfers');
});

/** A fresh tenant with a client of its own, so runs never see each other's batches. */
const newTenant = async () => {
  const tenant = `b-${randomUUID().slice(0, 8)}`;
  const clientId = `list-${tenant}`;
  const scope = 'transactions:read transactions:write';
  await registerClient(clients, { clientId, secret: SECRET, scopes: scope.split(' '), tenant });
  return requestToken(service.baseUrl, scope, { clientId, clientSecret: SECRET });
};

const get = (token: string, path: string, query: Record<string, string> = {}) =>
  callApi(service.baseUrl, `${path}?${new URLSearchParams(query)}`, { token });

const submitJson = async (token: string, references: readonly [string, string][]) => {
  const reply = await callApi(service.baseUrl, BATCHES, {
    token,
    body: {
      creditTransfers: references.map(([endToEndId, instructionId]) =>
        minimalCreditTransfer({
          identifiers: [
            { number: endToEndId, schemeName: 'EndToEndId' },
            { number: instructionId, schemeName: 'InstrId' },
          ],
        }),
      ),
    },
  });
  expect(reply.status, JSON.stringify(reply.body)).toBe(202);
  return reply.body as {
    batchId: string;
    createdAt: string;
    messageId: string;
    creditTransfers: { paymentId: string }[];
  };
};

const submitXml = async (token: string, messageId: string) => {
  const xml = (await readFile('examples/pain.001.001.09.xml', 'utf8'))
    .replaceAll('2026-12-01', new Date().toISOString().slice(0, 10))
    .replace(/<MsgId>[^<]*<\/MsgId>/, `<MsgId>${messageId}</MsgId>`);
  const reply = await callApi(service.baseUrl, BATCHES, {
    token,
    rawBody: xml,
    headers: { 'Content-Type': 'application/xml' },
  });
  expect(reply.status).toBe(202);
  return reply.body as { batchId: string; creditTransfers: { paymentId: string }[] };
};

const idsOf = (body: unknown) =>
  (body as { batchId?: string; paymentId?: string }[]).map((item) => item.batchId ?? item.paymentId);

describe('the list of batches', () => {
  it("lists a tenant's batches newest first, page by page, by message id and by acceptance time; another tenant sees none", async () => {
    const token = await newTenant();
    const first = await submitJson(token, [['E2E-A1', 'INS-A1']]);
    const second = await submitJson(token, [['E2E-B1', 'INS-B1']]);
    const pain = await submitXml(token, `LIST-${Date.now()}`);
    const third = await submitJson(token, [['E2E-C1', 'INS-C1']]);
    const newestFirst = [third.batchId, pain.batchId, second.batchId, first.batchId];

    const all = await get(token, BATCHES);
    expect(all.status).toBe(200);
    expect(idsOf(all.body)).toEqual(newestFirst);
    expect(all.headers.get('pagination-cursor')).toBe('');
    expect(all.body[1]).toMatchObject({ batchId: pain.batchId, messageName: 'pain.001.001.09', count: 3 });

    const pages: string[] = [];
    let cursor = '';
    do {
      const page = await get(token, BATCHES, { limit: '1', ...(cursor && { cursor }) });
      expect(page.status).toBe(200);
      pages.push(...idsOf(page.body).map(String));
      cursor = page.headers.get('pagination-cursor') ?? '';
    } while (cursor !== '');
    expect(pages).toEqual(newestFirst);

    const painMessage = (await get(token, `${BATCHES}/${pain.batchId}`)).body.messageId as string;
    expect(idsOf((await get(token, BATCHES, { 'messageId.eq': painMessage })).body)).toEqual([pain.batchId]);
    expect(idsOf((await get(token, BATCHES, { 'messageId.eq': second.messageId })).body)).toEqual([
      second.batchId,
    ]);
    expect((await get(token, BATCHES, { 'messageId.eq': 'NO-SUCH-MESSAGE' })).body).toEqual([]);

    const since = await get(token, BATCHES, {
      'createdAt.gte': (await get(token, `${BATCHES}/${pain.batchId}`)).body.createdAt,
    });
    expect(idsOf(since.body)).toEqual([third.batchId, pain.batchId]);
    const until = await get(token, BATCHES, { 'createdAt.lte': second.createdAt });
    expect(idsOf(until.body)).toEqual([second.batchId, first.batchId]);
    const refused = await get(token, BATCHES, {
      'createdAt.gte': third.createdAt,
      'createdAt.lte': first.createdAt,
    });
    expect(refused.status).toBe(400);
    expect((await get(token, BATCHES, { 'messageid.eq': 'x' })).status).toBe(400);

    const other = await newTenant();
    expect((await get(other, BATCHES)).body).toEqual([]);
    expect((await get(other, BATCHES, { 'messageId.eq': painMessage })).body).toEqual([]);
    expect((await get(other, BATCHES, { 'messageId.eq': second.messageId })).body).toEqual([]);
  });
});

describe('the transfers list by reference', () => {
  it('finds transfers by end-to-end id, instruction id and batch; another tenant finds none', async () => {
    const token = await newTenant();
    const batch = await submitJson(token, [
      ['E2E-REF-1', 'INS-REF-1'],
      ['E2E-REF-2', 'INS-REF-2'],
      ['E2E-REF-3', 'INS-REF-3'],
    ]);
    const [one, two, three] = batch.creditTransfers.map((transfer) => transfer.paymentId);
    const pain = await submitXml(token, `REF-${Date.now()}`);

    expect(idsOf((await get(token, TRANSFERS, { 'endToEndId.eq': 'E2E-REF-2' })).body)).toEqual([two]);
    expect(idsOf((await get(token, TRANSFERS, { 'instructionId.eq': 'INS-REF-3' })).body)).toEqual([three]);
    // A pain.001's own PmtId, as its reports name it.
    expect(idsOf((await get(token, TRANSFERS, { 'endToEndId.eq': 'INV-2026-0457' })).body)).toEqual([
      pain.creditTransfers[2]?.paymentId,
    ]);
    const ofBatch = await get(token, TRANSFERS, { 'batchId.eq': batch.batchId });
    expect(new Set(idsOf(ofBatch.body))).toEqual(new Set([one, two, three]));
    expect(ofBatch.headers.get('pagination-total')).toBe('3');
    const paged = await get(token, TRANSFERS, { 'batchId.eq': batch.batchId, limit: '2' });
    expect(idsOf(paged.body)).toHaveLength(2);
    const rest = await get(token, TRANSFERS, {
      'batchId.eq': batch.batchId,
      limit: '2',
      cursor: paged.headers.get('pagination-cursor') ?? '',
    });
    expect(new Set([...idsOf(paged.body), ...idsOf(rest.body)])).toEqual(new Set([one, two, three]));
    expect(
      idsOf(
        (await get(token, TRANSFERS, { 'endToEndId.eq': 'E2E-REF-2', 'instructionId.eq': 'INS-REF-1' })).body,
      ),
    ).toEqual([]);
    expect((await get(token, TRANSFERS, { 'batchId.eq': 'not-a-batch' })).status).toBe(400);

    const other = await newTenant();
    expect((await get(other, TRANSFERS, { 'endToEndId.eq': 'E2E-REF-2' })).body).toEqual([]);
    expect((await get(other, TRANSFERS, { 'batchId.eq': batch.batchId })).body).toEqual([]);
  });
});
