/** Module resolution hook of fake-onoff.mjs: `onoff` is the fake. */
const FAKE = new URL('./fake-onoff-gpio.mjs', import.meta.url).href;

export async function resolve(specifier, context, next) {
  if (specifier === 'onoff') return { url: FAKE, shortCircuit: true };
  return next(specifier, context);
}
