import { afterAll, beforeAll } from 'vitest';
import { createDocumentClient, type DocumentClient } from '#adapters/aws/dynamodb-client';
import { type ContractProxy, startContractProxy } from './contract-proxy.ts';
import { type LocalService, removeDataDir, requestToken, startLocalService } from './local-service.ts';

export interface LocalServiceOptions {
  /**
   * The service's environment, as for startLocalService (PORT is the public port); a function when
   * it names something a beforeAll registered before this call starts (a stub's URL).
   */
  env?: Record<string, string> | (() => Record<string, string>);
  /** A token of the local client at every start: `true` for the client's own scopes, or the scope to ask for. */
  token?: true | string;
}

/** The suite's own local service, filled in by beforeAll: read it inside tests and hooks. */
export interface LocalServiceFixture extends LocalService {
  /** The token options.token asked for, issued by the running service. */
  readonly token: string;
  /** A document client on the running service's table. */
  readonly table: DocumentClient;
  /**
   * Starts the service again on its data folder and environment, once the test has stopped or
   * killed it. `samePort` keeps its public address (the issuer its earlier tokens name): the
   * contract proxy that stands for it stays listening through the restart, as the port was never
   * given up, so nothing else on the machine (another suite's receiver, an outgoing connection's
   * port) can take it in between.
   */
  startAgain(options?: { samePort?: boolean }): Promise<void>;
}

/**
 * Starts one local service for the suite (or the describe block) it is called in, and stops it
 * and removes its data folder after the last test. Each suite gets its own: suites run in
 * parallel workers, and some set their own environment or stop and restart theirs.
 */
export const useLocalService = (options: LocalServiceOptions = {}): LocalServiceFixture => {
  let running: LocalService | undefined;
  let token: string | undefined;
  let table: DocumentClient | undefined;
  /** The public address clients use (PORT), kept across a restart on the same port. */
  let publicAddress: ContractProxy | undefined;

  const current = (): LocalService => {
    if (running === undefined)
      throw new Error('the local service starts in beforeAll: read it inside a test');
    return running;
  };
  const configuredEnv = () => (typeof options.env === 'function' ? options.env() : (options.env ?? {}));
  const start = async (dataDir?: string, { keepAddress = false } = {}) => {
    const env = configuredEnv();
    if (!keepAddress || publicAddress === undefined) {
      await publicAddress?.close();
      publicAddress = undefined;
      publicAddress = await startContractProxy(Number(env.PORT ?? 0));
    }
    running = await startLocalService({
      ...(dataDir !== undefined && { dataDir }),
      env,
      proxy: publicAddress,
    });
    table = undefined;
    token = undefined;
    if (options.token !== undefined)
      token = await requestToken(running.baseUrl, options.token === true ? undefined : options.token);
  };

  beforeAll(() => start());
  afterAll(async () => {
    try {
      if (running === undefined) return;
      try {
        await running.stop();
      } finally {
        await removeDataDir(running.dataDir);
      }
    } finally {
      await publicAddress?.close();
    }
  });

  return {
    get baseUrl() {
      return current().baseUrl;
    },
    get serviceUrl() {
      return current().serviceUrl;
    },
    get tableSocket() {
      return current().tableSocket;
    },
    get dataDir() {
      return current().dataDir;
    },
    get pid() {
      return current().pid;
    },
    output: () => current().output(),
    contractViolations: () => current().contractViolations(),
    stop: () => current().stop(),
    kill: () => current().kill(),
    get token() {
      if (token === undefined) throw new Error('no token: pass useLocalService({ token })');
      return token;
    },
    get table() {
      table ??= createDocumentClient(undefined, current().tableSocket);
      return table;
    },
    startAgain: async ({ samePort = false } = {}) => {
      await start(current().dataDir, { keepAddress: samePort });
    },
  };
};
