import type { PolicyDocument, StackPolicies } from './iam-policies.ts';

/**
 * The key a remembered IAM decision is found by. Two requests may share a decision when no
 * condition of any policy can tell their context apart. A transfer's every call names new keys
 * (`PAYMENT#<tenant>#<id>`), yet the policies only ask which of their patterns a key matches
 * (`PAYMENT#*`): a value is kept in the key as that answer, pattern by pattern, wherever every
 * condition on its context key compares strings to fixed values. Anything else (an operator that
 * reads the value otherwise, a policy variable anywhere) keeps the value itself, so the key is
 * never coarser than what the policies could tell apart.
 */

type Context = Record<string, string | string[]>;

type Matcher = (pattern: string) => (value: string) => boolean;

/** IAM's `*` (any run of characters) and `?` (one character); everything else literal. */
const like: Matcher = (pattern) => {
  const glob = new RegExp(
    `^${[...pattern].map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[\\^$.+()[\]{}|]/g, '\\$&'))).join('')}$`,
    's',
  );
  return (value) => glob.test(value);
};
/** An ARN's six colon-separated parts, the last keeping any further colons. */
const arnParts = (arn: string): string[] => {
  const parts = arn.split(':');
  return [...parts.slice(0, 5), parts.slice(5).join(':')];
};
/** IAM's ArnLike (and ArnEquals, which takes the same wildcards): each part of the ARN matched on its own. */
const arnLike: Matcher = (pattern) => {
  const tests = arnParts(pattern).map((part) => like(part));
  return (value) => {
    const parts = arnParts(value);
    return parts.length === tests.length && tests.every((test, index) => test(parts[index] as string));
  };
};
const equals: Matcher = (pattern) => (value) => value === pattern;
const equalsIgnoringCase: Matcher = (pattern) => (value) => value.toLowerCase() === pattern.toLowerCase();

/** Operators whose answer on a value depends only on whether it matches each of their values (a negation too). */
const MATCHING_OPERATORS: Readonly<Record<string, Matcher>> = {
  stringlike: like,
  stringnotlike: like,
  stringequals: equals,
  stringnotequals: equals,
  stringequalsignorecase: equalsIgnoringCase,
  stringnotequalsignorecase: equalsIgnoringCase,
  arnlike: arnLike,
  arnnotlike: arnLike,
  arnequals: arnLike,
  arnnotequals: arnLike,
};

/** `ForAllValues:StringLike` -> `stringlike`; `StringEqualsIfExists` -> `stringequals`. */
const baseOperator = (operator: string): string =>
  operator
    .toLowerCase()
    .replace(/^(forallvalues|foranyvalue):/, '')
    .replace(/ifexists$/, '');

/** Each context key's tests, by its lower-cased name; `exact` where the value itself must be kept. */
type Tests = Map<string, ((value: string) => boolean)[] | 'exact'>;

const testsOf = (documents: readonly PolicyDocument[]): Tests | 'exact' => {
  if (documents.some((document) => JSON.stringify(document).includes('${'))) return 'exact';
  const tests: Tests = new Map();
  for (const statement of documents.flatMap((document) => document.Statement)) {
    const condition = (statement.Condition ?? {}) as Record<string, Record<string, unknown>>;
    for (const [operator, keys] of Object.entries(condition)) {
      const base = baseOperator(operator);
      for (const [name, values] of Object.entries(keys)) {
        const key = name.toLowerCase();
        const known = tests.get(key) ?? [];
        if (known === 'exact') continue;
        // Null asks only whether the key is there, which every decision key says.
        if (base === 'null') {
          tests.set(key, known);
          continue;
        }
        const matcher = MATCHING_OPERATORS[base];
        tests.set(
          key,
          matcher === undefined ? 'exact' : [...known, ...[values].flat().map((v) => matcher(String(v)))],
        );
      }
    }
  }
  return tests;
};

/** A function of (function, request) giving the key its decision is remembered by. */
export const decisionKeys = (policies: StackPolicies) => {
  const tests = testsOf([
    ...Object.values(policies.functions).flatMap((fn) => fn.identityPolicies.map(({ policy }) => policy)),
    ...Object.values(policies.resourcePolicies),
  ]);
  const classOf = (key: string, value: string): string => {
    if (tests === 'exact') return JSON.stringify(value);
    const keyTests = tests.get(key.toLowerCase());
    // A key no condition names cannot change a decision: only its presence is kept.
    if (keyTests === undefined) return '';
    if (keyTests === 'exact') return JSON.stringify(value);
    return keyTests.map((test) => (test(value) ? '1' : '0')).join('');
  };
  const contextClasses = (context: Context) =>
    Object.entries(context)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, value]) =>
        Array.isArray(value)
          ? [key, [...new Set(value.map((v) => classOf(key, v)))].sort()]
          : [key, classOf(key, value)],
      );
  return (functionName: string, request: { action: string; resource: string; context: Context }): string =>
    JSON.stringify([functionName, request.action, request.resource, contextClasses(request.context)]);
};
