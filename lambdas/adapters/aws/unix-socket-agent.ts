import { Agent, type ClientRequestArgs } from 'node:http';
import { connect } from 'node:net';
import type { Duplex } from 'node:stream';

/** The URL a client is given for a table reached over a Unix socket: the agent decides where it goes. */
export const UNIX_SOCKET_ENDPOINT = 'http://localhost';

/**
 * HTTP over a Unix socket: every connection goes to `socketPath`, whatever host the URL names.
 * The local table listens on a socket inside the owner-only data folder rather than on a TCP
 * port any local process could call; connections are kept alive as on TCP.
 */
export class UnixSocketAgent extends Agent {
  constructor(readonly socketPath: string) {
    super({ keepAlive: true });
  }

  override createConnection(_options: ClientRequestArgs): Duplex {
    return connect(this.socketPath);
  }
}
