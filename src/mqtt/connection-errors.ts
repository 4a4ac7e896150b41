/** How the MQTT connection words its failures and bounds its waits (used by client.ts). */

/** The reason of a refused CONNACK ("Not authorized"), or undefined for other errors. */
export function connackRefusal(error: Error): string | undefined {
  const match = /^Connection refused: (.+)$/.exec(error.message);
  return match ? match[1] : undefined;
}

/** What a person can do about a refused connection. */
export function refusalHint(error: Error | undefined): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  // 4/5 (MQTT 3.1.1) and 134/135 (MQTT 5): bad user name or password, not authorized.
  if (code === 4 || code === 5 || code === 134 || code === 135) {
    return "check mqtt.username, the password in mqtt.passwordFile (or HOMEOSTAT_MQTT_PASSWORD) and the broker's ACL; retrying in the background";
  }
  return 'retrying in the background';
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what = 'timed out'): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} within ${timeoutMs} ms`)), timeoutMs);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
