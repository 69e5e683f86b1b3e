// aws-xray-sdk-core needs semver only to patch AWS SDK v2 clients (captureAWS), which this service
// never does; the real package is 30 KB of every function's cold start.
const unused = () => {
  throw new Error('semver is not bundled: AWS SDK v2 clients cannot be traced here');
};
module.exports = { gte: unused, satisfies: unused, valid: unused, coerce: unused };
