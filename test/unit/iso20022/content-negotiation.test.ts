import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { prefersXml } from '#api/content-negotiation';

const withAccept = (accept?: string) =>
  ({
    headers: accept === undefined ? {} : { Accept: accept },
    multiValueHeaders: {},
  }) as unknown as APIGatewayProxyEvent;

describe('Accept negotiation', () => {
  it.each([
    [undefined, false],
    ['*/*', false],
    ['application/json', false],
    ['application/xml', true],
    ['text/xml', true],
    ['application/json, application/xml;q=0.5', false],
    ['application/xml, application/json;q=0.5', true],
    ['application/xml;q=0', false],
  ])('Accept %s answers XML: %s', (accept, xml) => {
    expect(prefersXml(withAccept(accept))).toBe(xml);
  });
});
