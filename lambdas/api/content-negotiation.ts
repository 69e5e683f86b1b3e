import type { APIGatewayProxyEvent } from 'aws-lambda';
import { headerValue } from '#shared/http-event';

const XML_TYPES = new Set(['application/xml', 'text/xml']);

/** The quality a media range of an Accept header gives `type` (RFC 9110 12.5.1): -1 when none names it. */
const qualityOf = (accept: string, matches: (range: string) => boolean): number => {
  let best = -1;
  for (const part of accept.split(',')) {
    const [range = '', ...parameters] = part.split(';').map((piece) => piece.trim().toLowerCase());
    if (!matches(range)) continue;
    const q = parameters.find((parameter) => parameter.startsWith('q='));
    const quality = q === undefined ? 1 : Number(q.slice(2));
    if (Number.isFinite(quality)) best = Math.max(best, quality);
  }
  return best;
};

/**
 * True when the client asks for XML (a pain.002) over JSON: `Accept` names application/xml (or
 * text/xml) with a quality above zero and above JSON's. JSON stays the default: no header, a
 * wildcard, or anything else answers JSON.
 */
export const prefersXml = (event: APIGatewayProxyEvent): boolean => {
  const accept = headerValue(event, 'accept');
  if (accept === undefined) return false;
  const xml = qualityOf(accept, (range) => XML_TYPES.has(range));
  const json = qualityOf(
    accept,
    (range) => range === 'application/json' || range === 'application/problem+json',
  );
  return xml > 0 && xml > json;
};
