import { z } from 'zod';
import { PwmOutput } from '../../drivers/pwm.js';
import { maxOnSchema, safeLevelSchema } from '../fields.js';
import { actuatorKind, type SafeTarget } from '../types.js';
import { pwmDoctor } from './pwm-doctor.js';
import { continuousOutput } from './shared.js';

/**
 * Shortest period taken, ms (1 µs, 1 MHz): the Pi's PWM counts its clock (tens of MHz), so a
 * period of a few clock cycles has no duty resolution left; fans want 25 kHz (0.04 ms).
 */
export const MIN_PWM_PERIOD_MS = 0.001;

/**
 * Longest period taken, ms. The BCM2835/2711 PWM counts the period in a 32-bit register of PWM
 * clock cycles: 2³² cycles are 42.9 s at a 100 MHz clock, 223 s at 19.2 MHz; RP1 (Pi 5) has a
 * 32-bit counter too. 60 s is above any zero-cross SSR's need (seconds); a chip whose clock
 * cannot count it refuses the period at start (EINVAL), and the start says so.
 */
export const MAX_PWM_PERIOD_MS = 60_000;

const schema = z
  .strictObject({
    kind: z.literal('pwm').describe('Actuator kind: decides which other keys apply. Required.'),
    chip: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe(
        'N of /sys/class/pwm/pwmchipN: 0 on a Pi 1–4 with dtoverlay=pwm or pwm-2chan, 2 on a Pi 5 ' +
          '(RP1). Default 0.',
      ),
    channel: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe(
        'Channel M of the chip (pwmM), below its npwm: on a Pi 1–4, 0 is PWM0 (GPIO12 or GPIO18), 1 is ' +
          'PWM1 (GPIO13 or GPIO19); on a Pi 5, 2 is GPIO18, 3 is GPIO19. Default 0.',
      ),
    periodMs: z
      .number()
      .min(MIN_PWM_PERIOD_MS)
      .max(MAX_PWM_PERIOD_MS)
      .optional()
      .describe(
        'Period, ms: seconds for a zero-cross SSR (1000–10000: it switches only at zero crossings, ' +
          'so a period of 100 mains half-cycles or more keeps the duty resolution at 1 %). Written to ' +
          `the kernel in ns. ${MIN_PWM_PERIOD_MS}..${MAX_PWM_PERIOD_MS}. Default: none, give periodMs or frequencyHz.`,
      ),
    frequencyHz: z
      .number()
      .min(1000 / MAX_PWM_PERIOD_MS)
      .max(1000 / MIN_PWM_PERIOD_MS)
      .optional()
      .describe(
        'Frequency, Hz, instead of periodMs: 25000 for a 4-pin PC fan (Intel spec), 100–1000 for a ' +
          'MOSFET-driven DC fan or LED. Default: none, give periodMs or frequencyHz.',
      ),
    polarity: z
      .enum(['normal', 'inversed'])
      .default('normal')
      .describe(
        'normal: the output is high for the duty part of each period, and level 0 disables the ' +
          "channel, whose pin then idles at the chip's idle level (low on a Pi): wire the load so " +
          'that a low pin is off. inversed: low for the duty part (a fan whose transistor inverts ' +
          'the signal); level 0 keeps the channel enabled at duty 0 (pin high), and as a disabled ' +
          'channel (at boot, before the daemon starts) drives such a load full on, inversed needs ' +
          'safeLevel 1. Written while the channel is disabled. Default normal.',
      ),
    safeLevel: safeLevelSchema,
    maxOnS: maxOnSchema,
  })
  .superRefine((pwm, ctx) => {
    if (pwm.polarity === 'inversed' && pwm.safeLevel < 1) {
      ctx.addIssue({
        code: 'custom',
        path: ['polarity'],
        message:
          'inversed needs safeLevel: 1: a disabled channel idles low (at boot, before the daemon ' +
          'starts, after it died), which an inverting driver turns into full on; for a load that ' +
          'must be off then, wire a driver that is off at a low pin and use polarity normal',
      });
    }
    if ((pwm.periodMs === undefined) === (pwm.frequencyHz === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: pwm.periodMs === undefined ? ['periodMs'] : ['frequencyHz'],
        message: 'give exactly one of periodMs (a zero-cross SSR: seconds) and frequencyHz (a fan: kHz)',
      });
    }
  })
  .describe(
    'A continuous output on a hardware PWM channel (/sys/class/pwm): a zero-cross SSR (period of ' +
      'seconds) or a fan (kHz). Level = duty cycle; level 0 disables the channel (held at duty 0 when inversed). Read back every ' +
      'cycle; `homeostat safe` drives it to its safe level (disabled at 0). Needs dtoverlay=pwm or pwm-2chan (docs/pwm.md).',
  );

type RawPwm = z.output<typeof schema>;
/** A pwm section with its period resolved to ns (from periodMs or frequencyHz). */
export type PwmConfig = RawPwm & { periodNs: number };

/** The period in whole ns, as the kernel takes it. */
function resolvePeriod(raw: RawPwm): PwmConfig {
  const { periodMs, frequencyHz } = raw;
  const periodNs = Math.round(periodMs !== undefined ? periodMs * 1e6 : 1e9 / (frequencyHz ?? 1));
  return { ...raw, periodNs };
}

export const pwmActuator = actuatorKind<typeof schema, PwmConfig>({
  kind: 'pwm',
  schema,
  ...continuousOutput,
  simulated: false,
  usesMqtt: false,
  resolve: resolvePeriod,
  driverFields: ['chip', 'channel', 'periodMs', 'frequencyHz', 'polarity'],
  createDriver: (pwm, ctx) =>
    new PwmOutput({
      id: ctx.id,
      chip: pwm.chip,
      channel: pwm.channel,
      periodNs: pwm.periodNs,
      polarity: pwm.polarity,
      sysfsRoot: ctx.gpio().sysfsRoot,
    }),
  // An enabled channel keeps its duty when the process is gone: `safe` drives it itself.
  safe: ({ chip, channel, safeLevel, periodNs, polarity }) => ({
    via: 'pwm',
    chip,
    channel,
    safeLevel,
    periodNs,
    polarity,
  }),
  safeFromBroken: brokenPwm,
  doctor: pwmDoctor,
});

/**
 * What a broken file still says of a pwm actuator: chip and channel (defaults 0) as integers,
 * else nothing; safeLevel (default 0), polarity (default normal) and the period from periodMs
 * or frequencyHz (1e9 / Hz ns), as far as the file gives them. What cannot be reached without
 * a period is reported not confirmed safe by `safe` (commands/safe-pwm.ts), never guessed.
 */
function brokenPwm(section: Record<string, unknown>): SafeTarget | undefined {
  const int = (value: unknown) =>
    value === undefined ? 0 : Number.isInteger(value) ? (value as number) : -1;
  const chip = int(section.chip);
  const channel = int(section.channel);
  if (chip < 0 || channel < 0) return undefined;
  const { safeLevel } = section;
  const periodNs = brokenPeriodNs(section);
  return {
    via: 'pwm',
    chip,
    channel,
    // Not a number: not within 0..1, which `safe` reports rather than guessing 0.
    safeLevel: safeLevel === undefined ? 0 : typeof safeLevel === 'number' ? safeLevel : Number.NaN,
    ...(periodNs !== undefined ? { periodNs } : {}),
    polarity: section.polarity === 'inversed' ? 'inversed' : 'normal',
  };
}

/** The period in whole ns from periodMs, else frequencyHz; undefined when neither is usable. */
function brokenPeriodNs(section: Record<string, unknown>): number | undefined {
  const positive = (value: unknown): value is number =>
    typeof value === 'number' && Number.isFinite(value) && value > 0;
  const { periodMs, frequencyHz } = section;
  const periodNs = positive(periodMs)
    ? Math.round(periodMs * 1e6)
    : positive(frequencyHz)
      ? Math.round(1e9 / frequencyHz)
      : undefined;
  return periodNs !== undefined && periodNs >= 1 ? periodNs : undefined;
}
