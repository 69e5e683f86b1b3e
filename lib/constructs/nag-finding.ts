import type { Stack } from 'aws-cdk-lib';
// cdk-nag's own renderer of a finding's resource: an acknowledgement must name what it prints.
import { flattenCfnReference } from 'cdk-nag/lib/utils/flatten-cfn-reference.js';

/**
 * A value as cdk-nag names it in a finding: literal where the template is literal (the partition
 * once the stack's region is known, as on every `cdk deploy`), `<AWS::Partition>` where it is a
 * token (a stack synthesized without a region).
 */
export const nagRendered = (stack: Stack, value: string): string => flattenCfnReference(stack.resolve(value));
