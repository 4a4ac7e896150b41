/**
 * How `homeostat init` asks its questions: an {@link Ask} function, a terminal one in production
 * (node:readline/promises on stdin/stdout) and a scripted one in tests.
 */
import { createInterface } from 'node:readline/promises';

/** Asks one question (the prompt text, defaults in brackets) and resolves to the answer line. */
export type Ask = (question: string) => Promise<string>;

/** Thrown by an {@link Ask} when there will be no answer: input closed (Ctrl-D), Ctrl-C. */
export class NoAnswer extends Error {
  constructor() {
    super('no answer (input closed)');
    this.name = 'NoAnswer';
  }
}

/** An Ask on a terminal, and the function that releases it (the process could not end otherwise). */
export function terminalAsk(
  input: NodeJS.ReadableStream = process.stdin,
  output: NodeJS.WritableStream = process.stdout,
): { ask: Ask; close: () => void } {
  const rl = createInterface({ input, output });
  let closed = false;
  rl.on('close', () => {
    closed = true;
  });
  // Without a listener readline only pauses on Ctrl-C, and the pending question never settles.
  rl.on('SIGINT', () => rl.close());
  const ask: Ask = async (question) => {
    if (closed) throw new NoAnswer();
    const abort = new AbortController();
    const onClose = () => abort.abort();
    rl.once('close', onClose);
    try {
      return await rl.question(question, { signal: abort.signal });
    } catch (error) {
      if (abort.signal.aborted) throw new NoAnswer();
      throw error;
    } finally {
      rl.off('close', onClose);
    }
  };
  return { ask, close: () => rl.close() };
}

/** The most times one question is asked before init gives up (a script feeding wrong answers). */
export const MAX_ATTEMPTS = 3;

/**
 * Asks until `parse` accepts the answer; an empty answer takes `fallback` when there is one.
 * Each refusal is written with its reason; after {@link MAX_ATTEMPTS} the last reason is thrown.
 */
export async function askUntil<T>(
  ask: Ask,
  write: (line: string) => void,
  question: string,
  fallback: string | undefined,
  parse: (answer: string) => { value: T } | { error: string },
): Promise<T> {
  const prompt = fallback === undefined ? `${question}: ` : `${question} [${fallback}]: `;
  let reason = '';
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const typed = (await ask(prompt)).trim();
    const answer = typed === '' ? fallback : typed;
    if (answer === undefined) {
      reason = 'an answer is needed';
    } else {
      const parsed = parse(answer);
      if ('value' in parsed) return parsed.value;
      reason = parsed.error;
    }
    write(`  ${reason}`);
  }
  throw new Error(reason);
}
