import { z } from 'zod';

/** Where sysfs is mounted unless gpio.sysfsRoot says otherwise. */
export const DEFAULT_SYSFS_ROOT = '/sys';

/** How BCM pin numbers map to sysfs GPIO numbers on this board. */
export const gpioSchema = z
  .strictObject({
    sysfsRoot: z
      .string()
      .min(1)
      .default(DEFAULT_SYSFS_ROOT)
      .describe(
        'Where sysfs is mounted; tests point it at a fixture directory. Every driver that touches sysfs uses it: GPIO pins (onoff under /sys, the sysfs files themselves under any other root, edges then seen by inotify on value), 1-Wire, PWM. Default /sys.',
      ),
    chipLabel: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Label of the GPIO chip whose line N is BCM GPIO N, when detection picks the wrong one. ' +
          'Default: detected (pinctrl-bcm2835, pinctrl-bcm2711, pinctrl-rp1, else the lowest-based chip ' +
          'with at least 54 lines).',
      ),
    base: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        'sysfs number of BCM GPIO 0; wins over chipLabel and detection (sysfs is then not read). ' +
          'Override only if detection fails. Default: detected.',
      ),
  })
  .describe(
    'Raspberry Pi GPIO, for the gpio_relay, gpio_input and pulse_rate kinds (and the 1-Wire bus of ' +
      'ds18b20). Pins are BCM numbers (GPIO17, not header pin 11), resolved through ' +
      '/sys/class/gpio/gpiochip*/label and base: the base is 512 on a Pi 4 with Bookworm, 571 on a ' +
      'Pi 5, 0 on older kernels. Applies to GPIO drivers created after it changes (all of them at the ' +
      'next start). Default: sysfsRoot /sys, chip detected.',
  );

export type GpioConfig = z.output<typeof gpioSchema>;
