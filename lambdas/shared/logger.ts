import { LogFormatter, Logger, LogItem } from '@aws-lambda-powertools/logger';
import type { LogAttributes, UnformattedAttributes } from '@aws-lambda-powertools/logger/types';

export const SERVICE_NAME = 'credit-transfers';

/** Keys whose values never reach a log: credentials of any kind. */
const SECRET_KEY = /authorization|token|secret|password|cookie|signature/i;
/** Keys holding an account number: only its last four characters are logged. */
const ACCOUNT_NUMBER_KEY = /accountnumber|iban/i;

export const REDACTED = '[redacted]';

/** `****6789`: all but the last four characters masked (all of them when it is that short). */
export const maskAccountNumber = (value: string): string =>
  value.length <= 4 ? '*'.repeat(value.length) : `${'*'.repeat(value.length - 4)}${value.slice(-4)}`;

const redact = (value: unknown, key = ''): unknown => {
  if (SECRET_KEY.test(key)) return REDACTED;
  if (ACCOUNT_NUMBER_KEY.test(key) && typeof value === 'string') return maskAccountNumber(value);
  if (value instanceof Error || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => redact(item, key));
  return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, redact(item, name)]));
};

/**
 * Powertools' JSON log line, with every attribute passed through `redact`: whatever a caller
 * hands the logger, a token or secret is replaced and an account number masked.
 */
class RedactingLogFormatter extends LogFormatter {
  formatAttributes(attributes: UnformattedAttributes, additional: LogAttributes): LogItem {
    return new LogItem({
      attributes: {
        level: attributes.logLevel,
        message: attributes.message,
        timestamp: this.formatTimestamp(attributes.timestamp),
        service: attributes.serviceName,
        cold_start: attributes.lambdaContext?.coldStart,
        function_name: attributes.lambdaContext?.functionName,
        function_request_id: attributes.lambdaContext?.awsRequestId,
        xray_trace_id: attributes.xRayTraceId,
      },
    }).addAttributes(redact(additional) as LogAttributes);
  }
}

export const logger = new Logger({ serviceName: SERVICE_NAME, logFormatter: new RedactingLogFormatter() });
