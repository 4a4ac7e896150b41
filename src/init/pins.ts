/**
 * The relay pin init accepts: a GPIO of the 40-pin header, by BCM number. Beyond the header
 * (BCM 28..53) the lines drive the board's own hardware on some models, so init refuses them
 * (the config file itself still takes any BCM 0..53 for those who know).
 */
import { exportedDirection, type GpioChip } from '../drivers/gpio/chip.js';

/** Header pin of each BCM GPIO on the 40-pin header (all Pis since the B+). */
export const HEADER_PIN_OF_BCM: Readonly<Record<number, number>> = {
  0: 27,
  1: 28,
  2: 3,
  3: 5,
  4: 7,
  5: 29,
  6: 31,
  7: 26,
  8: 24,
  9: 21,
  10: 19,
  11: 23,
  12: 32,
  13: 33,
  14: 8,
  15: 10,
  16: 36,
  17: 11,
  18: 12,
  19: 35,
  20: 38,
  21: 40,
  22: 15,
  23: 16,
  24: 18,
  25: 22,
  26: 37,
  27: 13,
};

/** The highest BCM number on the 40-pin header. */
export const MAX_HEADER_BCM = 27;

/** The 1-Wire data line of `dtoverlay=w1-gpio` unless moved with `gpiopin=`. */
export const ONE_WIRE_BCM = 4;

/** Pins that work for a relay but have another common use, and what it is. */
const SHARED_PINS: Readonly<Record<number, string>> = {
  0: 'the HAT ID EEPROM bus (ID_SD), read by the firmware at boot',
  1: 'the HAT ID EEPROM bus (ID_SC), read by the firmware at boot',
  2: 'I2C SDA (with a pull-up on the board)',
  3: 'I2C SCL (with a pull-up on the board)',
  14: 'the serial console TX',
  15: 'the serial console RX',
};

/** `GPIO17 (header pin 11)`. */
export function describePin(bcm: number): string {
  const header = HEADER_PIN_OF_BCM[bcm];
  return header === undefined ? `GPIO${bcm}` : `GPIO${bcm} (header pin ${header})`;
}

/**
 * A relay pin as typed (flag or answer): the BCM number, or why it is refused. `usesOneWire`:
 * the config reads a DS18B20, so GPIO4 carries the bus and must not switch a relay.
 */
export function parseRelayPin(text: string, usesOneWire: boolean): { bcm: number } | { error: string } {
  const trimmed = text.trim().replace(/^gpio/i, '');
  const bcm = Number(trimmed);
  if (trimmed === '' || !Number.isInteger(bcm) || bcm < 0) {
    return { error: `relay pin "${text}" is not a BCM GPIO number (e.g. 17 for GPIO17, header pin 11)` };
  }
  if (bcm > MAX_HEADER_BCM) {
    return {
      error:
        `GPIO${bcm} is not on the 40-pin header (GPIO0..${MAX_HEADER_BCM}); on some models it drives the ` +
        "board's own hardware: choose a header pin (the config file's bcm takes up to 53 if you are sure)",
    };
  }
  if (usesOneWire && bcm === ONE_WIRE_BCM) {
    return {
      error:
        'GPIO4 (header pin 7) carries the DS18B20s of the 1-Wire bus (dtoverlay=w1-gpio): choose another ' +
        'pin for the relay, e.g. 17',
    };
  }
  return { bcm };
}

/**
 * Things worth knowing about a pin init accepted, one line each: another common use, an export
 * left by some program (something may be driving it), no chip to resolve it on.
 */
export async function relayPinNotes(
  bcm: number,
  sysfsRoot: string,
  mainChip: GpioChip | undefined,
): Promise<string[]> {
  const notes: string[] = [];
  const shared = SHARED_PINS[bcm];
  if (shared) notes.push(`${describePin(bcm)} is also ${shared}: make sure nothing else uses it`);
  if (mainChip) {
    const sysfsNumber = mainChip.base + bcm;
    const direction = await exportedDirection(sysfsRoot, sysfsNumber).catch(() => undefined);
    if (direction !== undefined) {
      notes.push(
        `${describePin(bcm)} is already exported (sysfs gpio${sysfsNumber}, direction ${direction}): ` +
          'another program may drive it; check before starting homeostat',
      );
    }
  }
  return notes;
}
