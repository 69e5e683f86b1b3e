// The AWS SDK's default credential chain, cut to what a Lambda function meets: the role's
// credentials in environment variables, or a container credentials endpoint (SnapStart,
// Lambda Managed Instances). The rest of the Node chain (SSO, INI files, process, web
// identity, EC2 instance metadata) is about 125 KB no function would ever use.
import { fromEnv } from '@aws-sdk/credential-provider-env';
import { chain } from '@smithy/core/config';
import { fromContainerMetadata } from '@smithy/credential-provider-imds';

export const defaultProvider = (init = {}) => chain(fromEnv(init), fromContainerMetadata(init));
