/**
 * Tar archives written byte by byte, so a test can make what `homeostat backup` never would (a
 * member named `../x`, a symlink, a directory) and check that restore refuses it. Ustar headers
 * (POSIX.1-1988): name, mode, sizes in octal, the checksum over the header with its own field
 * as spaces, the type flag.
 */
import { gzipSync } from 'node:zlib';

export interface RawMember {
  name: string;
  content?: Buffer | string;
  /** '0' file (default), '2' symlink, '5' directory. */
  type?: '0' | '2' | '5';
  linkTarget?: string;
}

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

function header(member: RawMember, size: number): Buffer {
  const block = Buffer.alloc(512);
  block.write(member.name, 0, 100, 'utf8');
  block.write(octal(0o644, 8), 100, 'ascii');
  block.write(octal(0, 8), 108, 'ascii');
  block.write(octal(0, 8), 116, 'ascii');
  block.write(octal(size, 12), 124, 'ascii');
  block.write(octal(0, 12), 136, 'ascii');
  block.write('        ', 148, 'ascii');
  block.write(member.type ?? '0', 156, 'ascii');
  if (member.linkTarget) block.write(member.linkTarget, 157, 100, 'utf8');
  block.write('ustar\u000000', 257, 'ascii');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return block;
}

/** A gzipped tar of `members`, in order. */
export function rawTarGz(members: readonly RawMember[]): Buffer {
  const parts: Buffer[] = [];
  for (const member of members) {
    const content = Buffer.from(member.content ?? '');
    parts.push(header(member, member.type === undefined || member.type === '0' ? content.length : 0));
    if (member.type === undefined || member.type === '0') {
      parts.push(content, Buffer.alloc((512 - (content.length % 512)) % 512));
    }
  }
  parts.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(parts));
}
