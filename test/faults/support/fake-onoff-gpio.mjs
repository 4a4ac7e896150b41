/**
 * onoff's `Gpio` over plain files under $HOMEOSTAT_FAULT_GPIO_ROOT, with the fixture trees'
 * convention (test/commands/safe-fixtures.ts): `value` holds the logical level, the raw level
 * the relay board sees is `value` XOR `active_low`. What onoff does on a real kernel, as far as
 * homeostat uses it: export on construction, `high`/`low` set the raw level with the direction,
 * `reconfigureDirection: false` leaves a live output alone, `activeLow` inverts from then on.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = process.env.HOMEOSTAT_FAULT_GPIO_ROOT;
if (!root) throw new Error('fake onoff: HOMEOSTAT_FAULT_GPIO_ROOT is not set');

const read = (path) => readFileSync(path, 'utf8').trim();

export class Gpio {
  static accessible = true;
  static HIGH = 1;
  static LOW = 0;

  constructor(gpio, direction, _edge, options = {}) {
    this.dir = join(root, 'class/gpio', `gpio${gpio}`);
    const activeLow = options.activeLow ? 1 : 0;
    if (!existsSync(this.dir)) {
      mkdirSync(this.dir, { recursive: true });
      writeFileSync(join(this.dir, 'direction'), 'in\n');
      writeFileSync(join(this.dir, 'value'), '0\n');
      writeFileSync(join(this.dir, 'active_low'), '0\n');
    }
    const raw = Number(read(join(this.dir, 'value'))) ^ Number(read(join(this.dir, 'active_low')));
    const exported = read(join(this.dir, 'direction'));
    const reconfigure = options.reconfigureDirection !== false || exported !== 'out';
    // The line does not move when active_low changes: the file's logical value does.
    writeFileSync(join(this.dir, 'active_low'), `${activeLow}\n`);
    if (direction === 'high' || direction === 'low' || (direction === 'out' && reconfigure)) {
      const newRaw = direction === 'high' ? 1 : 0;
      writeFileSync(join(this.dir, 'direction'), 'out\n');
      writeFileSync(join(this.dir, 'value'), `${newRaw ^ activeLow}\n`);
    } else {
      if (direction === 'in') writeFileSync(join(this.dir, 'direction'), 'in\n');
      writeFileSync(join(this.dir, 'value'), `${raw ^ activeLow}\n`);
    }
  }

  readSync() {
    return Number(read(join(this.dir, 'value')));
  }

  read(callback) {
    const value = this.readSync();
    if (callback) return void callback(null, value);
    return Promise.resolve(value);
  }

  writeSync(value) {
    writeFileSync(join(this.dir, 'value'), `${value}\n`);
  }

  write(value, callback) {
    this.writeSync(value);
    if (callback) return void callback(null);
    return Promise.resolve();
  }

  watch() {}
  unwatch() {}
  unwatchAll() {}
  unexport() {}
}

export default { Gpio };
