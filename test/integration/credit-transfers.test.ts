import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { fullCreditTransfer, minimalCreditTransfer } from '../fixtures/credit-transfers.ts';
import { callApi, createClient, requestToken } from './support/local-service.ts';
import { useLocalService } from './support/use-local-service.ts';

const TRANSFERS = '/v1/payments/credit-transfers';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const service = useLocalService({ token: 'transactions:read transactions:write' });

/** A credit transfer without the fields that change as it moves through its lifecycle. */
const withoutStatus = ({
  status: _status,
  statusReason: _reason,
  date: _date,
  ...transfer
}: Record<string, unknown>) => transfer;

const initiate = (body: unknown, headers: Record<string, string> = {}) =>
  callApi(service.baseUrl, TRANSFERS, { token: service.token, body, headers });
const status = (paymentId: string, accessToken = service.token) =>
  callApi(service.baseUrl, `${TRANSFERS}/${encodeURIComponent(paymentId)}/status`, { token: accessToken });

/** Every stored credit transfer item, read straight from the service's DynamoDB. */
const storedTransfers = async (): Promise<Record<string, unknown>[]> => {
  const items: Record<string, unknown>[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await service.table.scan({ TableName: 'credit-transfers', ExclusiveStartKey });
    items.push(...(page.Items ?? []).filter((item) => item.type === 'CreditTransfer'));
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return items;
};

describe('credit transfer initiation', () => {
  it('accepts a transfer with every optional field and echoes each value exactly as sent', async () => {
    const body = fullCreditTransfer();
    const reply = await initiate(body);

    expect(reply.status).toBe(202);
    expect(reply.headers.get('content-type')).toContain('application/json');
    const { paymentId, status: state, date, ...echoed } = reply.body;
    expect(echoed).toEqual(body);
    expect(JSON.stringify(echoed)).toBe(JSON.stringify(body));
    expect(paymentId).toMatch(UUID);
    expect(state).toBe('Received');
    expect(Date.parse(date)).not.toBeNaN();
    // Absolute, under the public URL the service is configured with (here the proxy in front of it).
    expect(reply.headers.get('location')).toBe(`${service.baseUrl}${TRANSFERS}/${paymentId}/status`);
  });

  it('stores the servicer headers, whatever the case of their names', async () => {
    const reply = await initiate(minimalCreditTransfer(), {
      SERVICERID: 'BANK-001',
      servicerbranchid: 'BR-42',
    });
    expect(reply.status).toBe(202);
    const stored = (await storedTransfers()).find((item) => item.paymentId === reply.body.paymentId);
    expect(stored?.servicer).toEqual({ servicerId: 'BANK-001', servicerBranchId: 'BR-42' });
  });

  it('answers each rule a body breaks with 400 naming the field', async () => {
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const cases: [string, unknown][] = [
      ['paymentMethod', minimalCreditTransfer({ paymentMethod: undefined })],
      ['amount', minimalCreditTransfer({ amount: undefined })],
      ['debtorAccountId', minimalCreditTransfer({ debtorAccountId: undefined })],
      ['amount', minimalCreditTransfer({ amount: '12.123456789' })],
      ['amount', minimalCreditTransfer({ amount: '12345678901234' })],
      ['amount', minimalCreditTransfer({ amount: '0012' })],
      ['amount', minimalCreditTransfer({ amount: 125.5 })],
      ['amount', minimalCreditTransfer({ amount: '0' })],
      ['amount', minimalCreditTransfer({ amount: '-5.00' })],
      ['currency', minimalCreditTransfer({ currency: 'usd' })],
      ['currency', minimalCreditTransfer({ currency: 'ABC' })],
      ['currency', minimalCreditTransfer({ currency: 'EURO' })],
      ['debtorAccountId', minimalCreditTransfer({ debtorAccountId: 'x'.repeat(37) })],
      ['debtorAccountId', minimalCreditTransfer({ debtorAccountId: '' })],
      ['creditorAccountId', minimalCreditTransfer({ creditorAccountId: 'y'.repeat(37) })],
      ['purpose', minimalCreditTransfer({ purpose: 'p'.repeat(1026) })],
      ['paymentMethod', minimalCreditTransfer({ paymentMethod: 'm'.repeat(36) })],
      ['domain', minimalCreditTransfer({ domain: 'd'.repeat(36) })],
      ['family', minimalCreditTransfer({ family: 'f'.repeat(61) })],
      ['paymentReason', minimalCreditTransfer({ paymentReason: '' })],
      ['valueDate', minimalCreditTransfer({ valueDate: '2026-02-30' })],
      ['valueDate', minimalCreditTransfer({ valueDate: yesterday })],
      ['paymentId', minimalCreditTransfer({ paymentId: 'chosen-by-client' })],
      ['status', minimalCreditTransfer({ status: 'AcceptedSettlementCompleted' })],
      ['amout', minimalCreditTransfer({ amout: '1.00' })],
      [
        'creditor.postalAddress.country',
        minimalCreditTransfer({ creditor: { postalAddress: { country: 'USA' } } }),
      ],
      [
        'creditor.agent.identifiers[0].foreignIDIndicator',
        minimalCreditTransfer({ creditor: { agent: { identifiers: [{ foreignIDIndicator: true }] } } }),
      ],
      ['debtor.account.currency', minimalCreditTransfer({ debtor: { account: { currency: 'XYZ' } } })],
      ['check.availabilityDate', minimalCreditTransfer({ check: { availabilityDate: '2026-12-01' } })],
      ['identifiers[0].number', minimalCreditTransfer({ identifiers: [{ number: 42 }] })],
      ['(body)', []],
      [
        'exchange.exchangeFactor',
        minimalCreditTransfer({ exchange: { currency: 'USD', exchangeFactor: '0.000' } }),
      ],
      [
        'check.availabilityDate',
        minimalCreditTransfer({ check: { availabilityDate: '9999-12-31T23:59:59-23:59' } }),
      ],
      [
        'creditor.account.accountNumber',
        minimalCreditTransfer({ creditor: { account: { accountNumber: '1'.repeat(31) } } }),
      ],
      // Money rules and hostile text (issue 18).
      ['amount', minimalCreditTransfer({ amount: '1.005', currency: 'EUR' })],
      ['amount', minimalCreditTransfer({ amount: '1.50', currency: 'JPY' })],
      ['amount', minimalCreditTransfer({ amount: '1.' })],
      ['check.amount', minimalCreditTransfer({ check: { amount: '2.5', currency: 'JPY' } })],
      ['currency', minimalCreditTransfer({ currency: 'XTS' })],
      ['valueDate', minimalCreditTransfer({ valueDate: '9999-12-31' })],
      ['purpose', minimalCreditTransfer({ purpose: 'rent\u0000' })],
      ['purpose', minimalCreditTransfer({ purpose: 'rent\r\nMay' })],
      ['debtor.name', minimalCreditTransfer({ debtor: { name: 'Example\u0085Corp' } })],
      ['paymentMethod', minimalCreditTransfer({ paymentMethod: 'Credit\tTransfer' })],
    ];
    for (const [field, body] of cases) {
      const reply = await initiate(body);
      expect.soft(reply.status, `${field}: ${JSON.stringify(body)}`).toBe(400);
      expect.soft(reply.body.error, field).toBe('invalid_request');
      expect
        .soft(
          reply.body.invalidParams?.map((p: { name: string }) => p.name),
          field,
        )
        .toContain(field);
    }
  });

  it('says how many decimals the currency allows, and accepts what fits it', async () => {
    const refused = await initiate(minimalCreditTransfer({ amount: '1.005', currency: 'EUR' }));
    expect(refused.status).toBe(400);
    expect(refused.body.invalidParams).toEqual([
      {
        name: 'amount',
        reason: 'must have at most 2 decimals in EUR (ISO 4217 minor unit 2); it has 3 decimals',
      },
    ]);
    for (const [amount, currency] of [
      ['1.005', 'BHD'],
      ['150', 'JPY'],
      ['0.12345678', 'XAU'],
    ]) {
      const accepted = await initiate(
        minimalCreditTransfer({ amount, currency, purpose: 'Invoice 118\n\tlines 1-3' }),
      );
      expect(accepted.status, `${amount} ${currency}: ${JSON.stringify(accepted.body)}`).toBe(202);
    }
  });

  it('refuses bodies that are not a JSON object of acceptable size and type', async () => {
    const malformed = await callApi(service.baseUrl, TRANSFERS, {
      token: service.token,
      rawBody: '{"amount": ',
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toBe('invalid_request');

    const wrongType = await callApi(service.baseUrl, TRANSFERS, {
      token: service.token,
      rawBody: 'amount=1',
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(wrongType.status).toBe(415);
    expect(wrongType.headers.get('content-type')).toBe('application/problem+json');

    const tooLarge = await initiate(minimalCreditTransfer({ purpose: 'x'.repeat(70 * 1024) }));
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.error).toBe('payload_too_large');
  });

  it('refuses a body that repeats a field, rather than keeping one of the two amounts', async () => {
    const reply = await callApi(service.baseUrl, TRANSFERS, {
      token: service.token,
      rawBody: '{"paymentMethod":"CreditTransfer","amount":"1.00","amount":"999.00","debtorAccountId":"dup"}',
    });
    expect(reply.status).toBe(400);
    expect(reply.body.invalidParams).toEqual([{ name: 'amount', reason: 'appears more than once' }]);
  });

  it('refuses a body that is not UTF-8, or declared in another charset', async () => {
    const latin1 = Buffer.concat([
      Buffer.from('{"paymentMethod":"CreditTransfer","amount":"1.00","debtorAccountId":"caf'),
      Buffer.from([0xe9]),
      Buffer.from('"}'),
    ]);
    const notUtf8 = await fetch(`${service.baseUrl}${TRANSFERS}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${service.token}`, 'Content-Type': 'application/json' },
      body: latin1,
    });
    expect(notUtf8.status).toBe(400);
    const declaredLatin1 = await fetch(`${service.baseUrl}${TRANSFERS}`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${service.token}`,
        'Content-Type': 'application/json; charset=iso-8859-1',
      },
      body: latin1,
    });
    expect(declaredLatin1.status).toBe(415);
  });

  it('refuses an idempotency key sent twice, whatever the values and letter case', async () => {
    /** Sends the header lines exactly as given: names, letter case and repeats. */
    const send = (headerLines: string[]) =>
      new Promise<{ status: number; refused?: string }>((resolve, reject) => {
        const body = JSON.stringify(minimalCreditTransfer());
        const outgoing = request(
          `${service.baseUrl}${TRANSFERS}`,
          {
            method: 'POST',
            // A raw header list gets no Host line of its own.
            headers: [
              'Host',
              new URL(service.baseUrl).host,
              'Authorization',
              `Bearer ${service.token}`,
              'Content-Type',
              'application/json',
              ...headerLines,
            ],
          },
          (incoming) => {
            let text = '';
            incoming.on('data', (chunk: Buffer) => {
              text += chunk.toString();
            });
            incoming.on('end', () =>
              resolve({
                status: incoming.statusCode ?? 0,
                refused: JSON.parse(text).invalidParams?.[0]?.name,
              }),
            );
          },
        );
        outgoing.on('error', reject);
        outgoing.end(body);
      });
    expect(await send(['idempotencyId', 'twice-a', 'idempotencyId', 'twice-b'])).toEqual({
      status: 400,
      refused: 'idempotencyId',
    });
    expect(await send(['idempotencyId', 'case-a', 'IDEMPOTENCYID', 'case-b'])).toEqual({
      status: 400,
      refused: 'idempotencyId',
    });
    expect(await send(['servicerId', 'bank-a', 'ServicerID', 'bank-b'])).toEqual({
      status: 400,
      refused: 'servicerId',
    });
    // Even with one value a repeat is refused: which of two lines counts is not the client's to leave open.
    expect(await send(['idempotencyId', 'same-twice', 'idempotencyId', 'same-twice'])).toEqual({
      status: 400,
      refused: 'idempotencyId',
    });
  });

  it('writes nothing for a refused request', async () => {
    const before = (await storedTransfers()).length;
    await initiate(minimalCreditTransfer({ amount: '-1' }), { idempotencyId: 'refused-request-key' });
    expect((await storedTransfers()).length).toBe(before);
  });
});

describe('idempotent initiation', () => {
  it('replays a repeated request with the same key and body: same paymentId, marked as replayed', async () => {
    const body = minimalCreditTransfer({ amount: '10.00' });
    const first = await initiate(body, { idempotencyId: 'replay-key-1' });
    const second = await initiate(body, { idempotencyId: 'replay-key-1' });

    expect(first.status).toBe(202);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(second.status).toBe(202);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    // The workflow may have moved the status on between the two calls; the transfer is the same.
    expect(withoutStatus(second.body)).toEqual(withoutStatus(first.body));
  });

  it('treats the Idempotency-Key header and a reordered body as the same request', async () => {
    const first = await initiate(
      { amount: '11.00', paymentMethod: 'CreditTransfer', debtorAccountId: 'acc-1' },
      {
        idempotencyId: 'replay-key-2',
      },
    );
    const second = await initiate(
      { debtorAccountId: 'acc-1', paymentMethod: 'CreditTransfer', amount: '11.00' },
      {
        'Idempotency-Key': 'replay-key-2',
      },
    );
    expect(second.status).toBe(202);
    expect(second.body.paymentId).toBe(first.body.paymentId);
  });

  it('answers 422 when a key is reused with a different body', async () => {
    await initiate(minimalCreditTransfer({ amount: '12.00' }), { idempotencyId: 'reused-key' });
    const reused = await initiate(minimalCreditTransfer({ amount: '12.01' }), {
      idempotencyId: 'reused-key',
    });
    expect(reused.status).toBe(422);
    expect(reused.body.error).toBe('idempotency_key_reused');
  });

  it('makes a new payment for each request without a key', async () => {
    const body = minimalCreditTransfer({ amount: '13.00' });
    const [first, second] = await Promise.all([initiate(body), initiate(body)]);
    expect(first.status).toBe(202);
    expect(second.status).toBe(202);
    expect(first.body.paymentId).not.toBe(second.body.paymentId);
  });

  it('makes exactly one payment from 50 concurrent identical requests, and answers each with 202', async () => {
    const body = minimalCreditTransfer({ amount: '14.00', debtorAccountId: 'concurrent-acc' });
    const replies = await Promise.all(
      Array.from({ length: 50 }, () => initiate(body, { idempotencyId: 'concurrent-key' })),
    );
    expect(replies.map((reply) => reply.status)).toEqual(Array(50).fill(202));
    expect(new Set(replies.map((reply) => reply.body.paymentId)).size).toBe(1);
    expect(replies.filter((reply) => reply.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    const stored = (await storedTransfers()).filter((item) => item.idempotencyKey === 'concurrent-key');
    expect(stored).toHaveLength(1);
  });

  it('refuses an idempotency key longer than 36 characters', async () => {
    const reply = await initiate(minimalCreditTransfer(), { idempotencyId: 'k'.repeat(37) });
    expect(reply.status).toBe(400);
    expect(reply.body.invalidParams[0].name).toBe('idempotencyId');
  });
});

describe('idempotent cancellation', () => {
  it('refuses the same key with other servicer headers, as initiation does', async () => {
    const created = await initiate(minimalCreditTransfer({ debtorAccountId: 'servicer-check-hold' }));
    const cancel = (servicerId: string) =>
      callApi(service.baseUrl, `${TRANSFERS}/${created.body.paymentId}/cancellation`, {
        method: 'POST',
        token: service.token,
        body: { cancellationReason: 'Ordered twice' },
        headers: { idempotencyId: 'cancel-servicer-key', servicerId },
      });
    expect((await cancel('BANK-A')).status).toBe(202);
    const repeat = await cancel('BANK-A');
    expect(repeat.status).toBe(202);
    expect(repeat.headers.get('idempotent-replayed')).toBe('true');
    const other = await cancel('BANK-B');
    expect(other.status).toBe(422);
    expect(other.body.error).toBe('idempotency_key_reused');
  });
});

describe('credit transfer status', () => {
  it('reports the current status of a transfer', async () => {
    const created = await initiate(minimalCreditTransfer({ amount: '20.00' }));
    const reply = await status(created.body.paymentId);
    expect(reply.status).toBe(200);
    expect(withoutStatus(reply.body)).toEqual(withoutStatus(created.body));
    expect(reply.body.status).toEqual(expect.any(String));
  });

  it('answers 404 for an unknown paymentId', async () => {
    const reply = await status('00000000-0000-4000-8000-000000000000');
    expect(reply.status).toBe(404);
    expect(reply.body.error).toBe('not_found');
  });

  it('answers 400 naming paymentId when its percent-encoding is broken', async () => {
    const reply = await callApi(service.baseUrl, `${TRANSFERS}/%ZZ/status`, { token: service.token });
    expect(reply.status).toBe(400);
    expect(reply.body.invalidParams).toEqual([{ name: 'paymentId', reason: expect.any(String) }]);
  });

  it('answers 400 for a paymentId longer than 36 characters', async () => {
    const reply = await status('p'.repeat(37));
    expect(reply.status).toBe(400);
    expect(reply.body.invalidParams[0].name).toBe('paymentId');
  });

  it("answers another tenant's paymentId with the same 404 as an unknown one, and keeps keys per tenant", async () => {
    const otherClient = { clientId: 'other-tenant-client', clientSecret: 'other-tenant-secret-0123456789' };
    await createClient(service, {
      ...otherClient,
      scope: 'transactions:read transactions:write',
      tenant: 'other',
    });
    const otherToken = await requestToken(service.baseUrl, undefined, otherClient);

    const mine = await initiate(minimalCreditTransfer({ amount: '21.00' }), { idempotencyId: 'shared-key' });
    const theirs = await callApi(service.baseUrl, TRANSFERS, {
      token: otherToken,
      body: minimalCreditTransfer({ amount: '99.00' }),
      headers: { idempotencyId: 'shared-key' },
    });
    expect(theirs.status).toBe(202);
    expect(theirs.body.paymentId).not.toBe(mine.body.paymentId);

    const peek = await status(mine.body.paymentId, otherToken);
    const unknown = await status('00000000-0000-4000-8000-000000000000', otherToken);
    expect(peek.status).toBe(404);
    expect(peek.body).toEqual({
      ...unknown.body,
      detail: peek.body.detail,
      error_description: peek.body.error_description,
    });
    expect(peek.body).not.toHaveProperty('amount');
  });
});
