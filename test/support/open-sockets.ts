import type { Server } from 'node:net';

export interface SocketFigures {
  open: number;
  most: number;
}

/**
 * Counts the sockets open at a receiver and the most at once, as the sender holds them. The
 * sender closes a socket before it opens the next, but this process may learn of both in one turn
 * of its loop, the new one first: the count is taken after that turn. A socket is gone at the
 * peer's end, a reset, or the close that follows either.
 */
export const countOpenSockets = <T extends SocketFigures>(server: Server, figures: T): T => {
  server.on('connection', (socket) => {
    figures.open++;
    let gone = false;
    const leave = () => {
      if (gone) return;
      gone = true;
      figures.open--;
    };
    setImmediate(() => {
      if (!gone) figures.most = Math.max(figures.most, figures.open);
    });
    socket.on('end', leave);
    socket.on('error', leave);
    socket.on('close', leave);
  });
  return figures;
};
