// `npm start` and `npm test` run on the Node 24 that `npm ci` installs (the `node` devDependency,
// first on npm's PATH), whatever Node runs npm. This says so in one line when the Node that runs
// npm is older than the service supports, before anything else is printed. Plain JavaScript, so it
// runs on any Node.
const SUPPORTED_MAJOR = 24;
const userAgent = process.env.npm_config_user_agent ?? '';
const found = /\bnode\/v(\d+)\./.exec(userAgent);
const major = found ? Number(found[1]) : undefined;
if (major !== undefined && major < SUPPORTED_MAJOR) {
  console.warn(
    `Node ${major} runs npm; the service supports Node ${SUPPORTED_MAJOR} and up (nvm use reads .nvmrc). ` +
      `This run uses the Node ${process.versions.node} that npm ci installed.`,
  );
}
