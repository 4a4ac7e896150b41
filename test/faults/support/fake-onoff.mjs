/**
 * Preloaded into a daemon child process by the fault suite (NODE_OPTIONS=--import=<this file>,
 * HOMEOSTAT_FAULT_GPIO_ROOT=<fixture sysfs root>), never by homeostat itself: `import('onoff')`
 * then loads fake-onoff-gpio.mjs, onoff's `Gpio` on the fixture tree's plain files instead of
 * /sys (onoff's root is fixed, and no test touches the real /sys). Plain JavaScript so it loads
 * before tsx.
 */
import { register } from 'node:module';

register(new URL('./fake-onoff-hooks.mjs', import.meta.url));
