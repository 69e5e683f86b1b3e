import type { StackPolicies } from './iam-policies.ts';

/**
 * Every grant of every role of the stack (its functions', its state machines', its schedules'),
 * one line per action of each statement: `<action> <resources>[ keys <prefixes>][ if <condition>]`,
 * the resources without the CDK's hash suffixes, so a line changes only when the grant does.
 * test/unit/local/iam-grants.test.ts compares them, per stage, with a committed list.
 */
export type Grants = Record<string, string[]>;

const LEADING_KEYS = 'dynamodb:LeadingKeys';

const readable = (arn: string): string =>
  arn
    .replace(/^arn:aws:([a-z0-9-]+):[^:]*:\d*:/, '$1:')
    // A logical id's hash (CDK's), and a table name given locally.
    .replace(/([A-Za-z0-9])[0-9A-F]{8}(?=$|[/:*])/g, '$1')
    .replace(/^dynamodb:table\/[^/]+/, 'dynamodb:table');

export const grantsOf = (policies: StackPolicies): Grants =>
  Object.fromEntries(
    Object.entries(policies.functions)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, fn]) => [
        name,
        fn.identityPolicies
          .flatMap(({ policy }) =>
            policy.Statement.flatMap((statement) => {
              const condition = {
                ...((statement.Condition ?? {}) as Record<string, Record<string, unknown>>),
              };
              let keys: string[] = [];
              for (const [operator, values] of Object.entries(condition)) {
                if (values[LEADING_KEYS] === undefined) continue;
                keys = [values[LEADING_KEYS]].flat().map(String);
                const { [LEADING_KEYS]: _, ...rest } = values;
                if (Object.keys(rest).length === 0) delete condition[operator];
                else condition[operator] = rest;
              }
              const resources = [statement.Resource].flat().map((arn) => readable(String(arn)));
              const suffix = [
                ...(keys.length > 0 ? [`keys ${keys.join(' ')}`] : []),
                ...(Object.keys(condition).length > 0 ? [`if ${JSON.stringify(condition)}`] : []),
              ];
              return [statement.Action]
                .flat()
                .map((action) =>
                  [
                    `${statement.Effect === 'Deny' ? 'DENY ' : ''}${action}`,
                    resources.join(' '),
                    ...suffix,
                  ].join(' '),
                );
            }),
          )
          .sort(),
      ]),
  );
