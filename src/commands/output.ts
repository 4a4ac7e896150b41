/**
 * How the command line ends, so that every byte of its output reaches a pipe. Writes to a pipe
 * are asynchronous: a reader slower than the command (`| less`, `| (sleep 4; wc -c)`) used to
 * get 65,536 bytes, the pipe's buffer, because the exit deadline fired before the rest drained.
 */

type Output = Pick<NodeJS.WriteStream, 'writableLength' | 'once' | 'on'>;

/**
 * A reader that closed its end (`| head -c 100`) is not an error of ours: stop writing, keep
 * the exit code. Without this, Node throws EPIPE as an unhandled 'error' event (a stack trace
 * and exit 1), and a daemon whose log pipe closed would die of it.
 */
export function ignoreClosedReaders(streams: readonly Output[] = [process.stdout, process.stderr]): void {
  for (const stream of streams) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
    });
  }
}

/** Resolves once every stream has written what it was given (or at once when nothing waits). */
export function drained(streams: readonly Output[] = [process.stdout, process.stderr]): Promise<void> {
  return Promise.all(
    streams.map((stream) =>
      stream.writableLength === 0
        ? undefined
        : new Promise<void>((resolve) => {
            stream.once('drain', () => resolve());
            // A reader that went away: nothing more will drain.
            stream.once('error', () => resolve());
            stream.once('close', () => resolve());
          }),
    ),
  ).then(() => undefined);
}

/**
 * Ends the process with `code`: by itself once nothing holds it, and at the latest `deadlineMs`
 * after the output drained (a driver or socket left open must not keep a stopped daemon alive).
 */
export function exitWhenDrained(code: number, deadlineMs = 3_000): void {
  process.exitCode = code;
  void drained().then(() => setTimeout(() => process.exit(code), deadlineMs).unref());
}
