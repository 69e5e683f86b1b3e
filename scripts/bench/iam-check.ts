import { IamEnforcer, type IamRequest } from '#local/iam-enforcement';
import { stackIam, stackPolicies } from '#local/iam-policies';

/**
 * What the local runtime's IAM check costs per call: the decision iam-simulate makes before each
 * AWS SDK call of a function, against the stack's policies, for the kinds of call the service makes.
 * `npm run bench` runs its services with LOCAL_IAM=off, so its other figures leave this out.
 */
const TABLE = 'arn:aws:dynamodb:local:000000000000:table/bench';

const CALLS: { name: string; fn: string; request: IamRequest }[] = [
  {
    name: 'GetItem, one tenant key (status route)',
    fn: 'GetCreditTransferStatus',
    request: {
      action: 'dynamodb:GetItem',
      resource: TABLE,
      context: { 'dynamodb:LeadingKeys': ['PAYMENT#t#p'] },
    },
  },
  {
    name: 'Query on a list index (list route)',
    fn: 'ListCreditTransfers',
    request: {
      action: 'dynamodb:Query',
      resource: `${TABLE}/index/listByTenant`,
      context: { 'dynamodb:LeadingKeys': ['PAYMENT_LIST#t#ALL'] },
    },
  },
  {
    name: 'BatchGetItem, 25 keys (list route)',
    fn: 'ListCreditTransfers',
    request: {
      action: 'dynamodb:BatchGetItem',
      resource: TABLE,
      context: { 'dynamodb:LeadingKeys': Array.from({ length: 25 }, (_, i) => `PAYMENT#t#${i}`) },
    },
  },
  {
    name: 'denied: PutItem on a client record (webhook rotation)',
    fn: 'RotateWebhookSecret',
    request: {
      action: 'dynamodb:PutItem',
      resource: TABLE,
      context: { 'dynamodb:LeadingKeys': ['CLIENT#c'] },
    },
  },
];

export interface IamCheckFigure {
  name: string;
  calls: number;
  /** A new key of a kind already decided, as each transfer's calls are: answered from memory. */
  rememberedMicroseconds: number;
  /** The library's evaluation, as the first call of each kind costs. */
  evaluatedMicroseconds: number;
}

export const benchIamCheck = async (calls: number): Promise<IamCheckFigure[]> => {
  const enforcer = new IamEnforcer(stackPolicies(stackIam(), { tableName: 'bench' }), undefined);
  // Each call asks for another item (a new key each time), as a transfer's calls do.
  const distinct = (request: IamRequest, i: number): IamRequest => ({
    ...request,
    context: {
      ...request.context,
      'dynamodb:LeadingKeys': [request.context['dynamodb:LeadingKeys'] ?? []]
        .flat()
        .map((key) => `${key}-${i}`),
    },
  });
  const figures: IamCheckFigure[] = [];
  for (const { name, fn, request } of CALLS) {
    for (let i = 0; i < 50; i++) await enforcer.evaluate(fn, distinct(request, -i)); // warm-up: the library loads its data once
    const meanMicroseconds = async (decide: (i: number) => Promise<unknown>) => {
      const started = process.hrtime.bigint();
      for (let i = 0; i < calls; i++) await decide(i);
      return Number(process.hrtime.bigint() - started) / 1000 / calls;
    };
    figures.push({
      name,
      calls,
      evaluatedMicroseconds: await meanMicroseconds((i) => enforcer.evaluate(fn, distinct(request, i))),
      rememberedMicroseconds: await meanMicroseconds((i) => enforcer.decide(fn, distinct(request, i))),
    });
  }
  return figures;
};
