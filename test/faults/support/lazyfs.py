#!/usr/bin/python3
"""A filesystem that forgets every write not yet fsynced when "the power goes" (LazyFS, by
Jepsen, is the model; this is a small FUSE passthrough of our own, on Debian's fuse3 and
python3-fusepy).

    lazyfs.py STATE_DIR MOUNTPOINT

Everything under MOUNTPOINT lives in STATE_DIR/visible (what the page cache holds: every
process sees every write at once, as on a real disk). What has reached the "disk" is kept
apart in STATE_DIR/durable:

- file data: STATE_DIR/durable/objects/<id>, updated from the visible file on fsync/fdatasync
  of that file (its whole content then: what fsync promises);
- names (create, mkdir, rename, link, unlink, rmdir, symlink): durable only once the directory
  holding them is fsynced: the directory's whole listing is taken then (POSIX, and what SQLite
  and writeFileDurably rely on). A file fsynced but whose name was never made durable is lost
  to a cut; a name made durable for a file whose data was never fsynced comes back empty.

The "power cut" is the end of this process: unmount it (umount MOUNTPOINT) after killing every
process using it. The next start rebuilds STATE_DIR/visible from STATE_DIR/durable, so what the
mount shows then is exactly what was fsynced. The first start (no durable state yet) takes
what STATE_DIR/visible holds as durable.

Simplifications (documented, none matters for SQLite or homeostat's file writes): file modes
and symlink targets are durable with the name; ownership, times and xattrs are not modelled;
the mode of an fsynced file is taken at its fsync. Single-threaded (nothreads).

On unmount it prints one JSON line of counts (fsyncs, directory fsyncs, bytes written and
bytes made durable) to stdout; "mounted" when the kernel mounted it.
"""

import errno
import json
import os
import shutil
import stat
import sys

try:
    from fusepy import FUSE, FuseOSError, Operations  # Debian's python3-fusepy
except ImportError:  # pip's fusepy
    from fuse import FUSE, FuseOSError, Operations

ROOT_ID = 0


class Durable:
    """The "disk": file data by id, directory listings by id, persisted under `path`."""

    def __init__(self, path):
        self.path = path
        self.objects = os.path.join(path, 'objects')
        self.namespace_path = os.path.join(path, 'namespace.json')
        os.makedirs(self.objects, exist_ok=True)
        # id -> {'kind': 'dir'|'file'|'symlink', 'mode': int, 'entries': {name: id}, 'target': str}
        self.nodes = {}
        if os.path.exists(self.namespace_path):
            with open(self.namespace_path) as f:
                self.nodes = {int(k): v for k, v in json.load(f).items()}

    def object_path(self, node_id):
        return os.path.join(self.objects, str(node_id))

    def save(self):
        temporary = self.namespace_path + '.tmp'
        with open(temporary, 'w') as f:
            json.dump(self.nodes, f)
        os.replace(temporary, self.namespace_path)

    def reachable(self):
        seen = set()
        stack = [ROOT_ID]
        while stack:
            node_id = stack.pop()
            if node_id in seen or node_id not in self.nodes:
                continue
            seen.add(node_id)
            stack.extend(self.nodes[node_id].get('entries', {}).values())
        return seen


class LazyFS(Operations):
    def __init__(self, state_dir):
        self.visible = os.path.join(state_dir, 'visible')
        self.durable = Durable(os.path.join(state_dir, 'durable'))
        self.ids = {}  # visible st_ino -> id (ids survive renames, never reused)
        self.next_id = 1
        self.dirty = {}  # id -> list of (offset, length) written since its last fsync
        self.handles = {}  # fh -> id
        self.counts = {'fsyncs': 0, 'dirFsyncs': 0, 'bytesWritten': 0, 'bytesSynced': 0}
        if self.durable.nodes:
            self.restore()
        else:
            self.adopt_visible()

    # --- start-up -------------------------------------------------------------------------

    def restore(self):
        """Power back: the visible tree becomes exactly the durable one."""
        shutil.rmtree(self.visible, ignore_errors=True)
        os.makedirs(self.visible)
        renumbered = {}
        self.next_id = max(self.durable.nodes) + 1
        self._restore_dir(ROOT_ID, self.visible, renumbered)
        # Objects of ids no durable name reaches were garbage: drop them.
        reachable = self.durable.reachable()
        for name in os.listdir(self.durable.objects):
            if int(name) not in reachable:
                os.unlink(os.path.join(self.durable.objects, name))

    def _restore_dir(self, dir_id, path, renumbered):
        node = self.durable.nodes[dir_id]
        os.chmod(path, node.get('mode', 0o755) & 0o7777)
        self.ids[os.lstat(path).st_ino] = dir_id
        for name, child_id in node.get('entries', {}).items():
            child = self.durable.nodes.get(child_id, {'kind': 'file', 'mode': 0o644})
            child_path = os.path.join(path, name)
            if child_id in renumbered:  # a second hard link
                os.link(renumbered[child_id], child_path)
            elif child['kind'] == 'dir':
                os.mkdir(child_path)
                self._restore_dir(child_id, child_path, renumbered)
            elif child['kind'] == 'symlink':
                os.symlink(child['target'], child_path)
                self.ids[os.lstat(child_path).st_ino] = child_id
            else:
                source = self.durable.object_path(child_id)
                with open(child_path, 'wb') as out:
                    if os.path.exists(source):
                        with open(source, 'rb') as data:
                            out.write(data.read())
                os.chmod(child_path, child.get('mode', 0o644) & 0o7777)
                self.ids[os.lstat(child_path).st_ino] = child_id
            renumbered[child_id] = child_path

    def adopt_visible(self):
        if not os.path.isdir(self.visible):
            os.makedirs(self.visible, 0o755)
        self.ids[os.lstat(self.visible).st_ino] = ROOT_ID
        self.durable.nodes[ROOT_ID] = {'kind': 'dir', 'mode': 0o755, 'entries': {}}
        for dirpath, dirnames, filenames in os.walk(self.visible):
            for name in filenames:
                path = os.path.join(dirpath, name)
                self._sync_file_path(self._id(path), path)
            self._sync_dir(dirpath)
        self.durable.save()

    # --- helpers ---------------------------------------------------------------------------

    def _v(self, path):
        return os.path.join(self.visible, path.lstrip('/'))

    def _id(self, vpath):
        ino = os.lstat(vpath).st_ino
        if ino not in self.ids:
            self.ids[ino] = self.next_id
            self.next_id += 1
        return self.ids[ino]

    def _forget_if_last(self, vpath):
        """Before a name goes: an inode losing its last name may be reused for a new file."""
        try:
            st = os.lstat(vpath)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(st.st_mode) or st.st_nlink <= 1:
            self.ids.pop(st.st_ino, None)

    def _sync_file(self, node_id, fd):
        obj = self.durable.object_path(node_id)
        size = os.fstat(fd).st_size
        out = os.open(obj, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            durable_size = os.fstat(out).st_size
            ranges = self.dirty.pop(node_id, [])
            # Growth the ranges do not cover (a file adopted or restored, written before).
            covered = max([durable_size] + [offset + length for offset, length in ranges])
            if covered < size:
                ranges.append((covered, size - covered))
            for offset, length in ranges:
                if offset >= size:
                    continue
                data = os.pread(fd, min(length, size - offset), offset)
                os.pwrite(out, data, offset)
                self.counts['bytesSynced'] += len(data)
            os.ftruncate(out, size)
        finally:
            os.close(out)
        node = self.durable.nodes.get(node_id)
        if node is not None:
            node['mode'] = os.fstat(fd).st_mode
            self.durable.save()

    def _sync_file_path(self, node_id, vpath):
        fd = os.open(vpath, os.O_RDONLY)
        try:
            self._sync_file(node_id, fd)
        finally:
            os.close(fd)

    def _sync_dir(self, vpath):
        dir_id = self._id(vpath)
        entries = {}
        for name in os.listdir(vpath):
            child_path = os.path.join(vpath, name)
            st = os.lstat(child_path)
            child_id = self._id(child_path)
            entries[name] = child_id
            node = self.durable.nodes.setdefault(child_id, {})
            node['mode'] = st.st_mode
            if stat.S_ISDIR(st.st_mode):
                node['kind'] = 'dir'
                node.setdefault('entries', {})
            elif stat.S_ISLNK(st.st_mode):
                node.update(kind='symlink', target=os.readlink(child_path))
            else:
                node['kind'] = 'file'
        node = self.durable.nodes.setdefault(dir_id, {'kind': 'dir'})
        node.update(kind='dir', mode=os.lstat(vpath).st_mode, entries=entries)
        self._collect()
        self.durable.save()

    def _collect(self):
        """Forgets durable nodes that neither a durable name nor a live file holds."""
        keep = self.durable.reachable() | set(self.ids.values())
        for node_id in [n for n in self.durable.nodes if n not in keep]:
            del self.durable.nodes[node_id]
            obj = self.durable.object_path(node_id)
            if os.path.exists(obj):
                os.unlink(obj)

    def _written(self, node_id, offset, length):
        ranges = self.dirty.setdefault(node_id, [])
        if ranges and ranges[-1][0] + ranges[-1][1] == offset:
            ranges[-1] = (ranges[-1][0], ranges[-1][1] + length)
        else:
            ranges.append((offset, length))
        self.counts['bytesWritten'] += length

    # --- FUSE operations -------------------------------------------------------------------

    def init(self, path):
        print('mounted', flush=True)

    def destroy(self, path):
        print(json.dumps(self.counts), flush=True)

    def access(self, path, amode):
        if not os.access(self._v(path), amode):
            raise FuseOSError(errno.EACCES)

    def getattr(self, path, fh=None):
        st = os.fstat(fh) if fh is not None else os.lstat(self._v(path))
        keys = ('st_mode', 'st_nlink', 'st_uid', 'st_gid', 'st_size', 'st_atime', 'st_mtime', 'st_ctime')
        return {key: getattr(st, key) for key in keys}

    def readdir(self, path, fh):
        return ['.', '..'] + os.listdir(self._v(path))

    def readlink(self, path):
        return os.readlink(self._v(path))

    def statfs(self, path):
        st = os.statvfs(self.visible)
        keys = ('f_bavail', 'f_bfree', 'f_blocks', 'f_bsize', 'f_favail', 'f_ffree', 'f_files', 'f_flag',
                'f_frsize', 'f_namemax')
        return {key: getattr(st, key) for key in keys}

    def chmod(self, path, mode):
        os.chmod(self._v(path), mode)

    def chown(self, path, uid, gid):
        os.lchown(self._v(path), uid, gid)

    def utimens(self, path, times=None):
        os.utime(self._v(path), times, follow_symlinks=False)

    def mkdir(self, path, mode):
        os.mkdir(self._v(path), mode)
        self._id(self._v(path))

    def rmdir(self, path):
        self._forget_if_last(self._v(path))
        os.rmdir(self._v(path))

    def symlink(self, target, source):
        os.symlink(source, self._v(target))
        self._id(self._v(target))

    def link(self, target, source):
        os.link(self._v(source), self._v(target))

    def unlink(self, path):
        self._forget_if_last(self._v(path))
        os.unlink(self._v(path))

    def rename(self, old, new):
        if os.path.lexists(self._v(new)):
            self._forget_if_last(self._v(new))
        os.rename(self._v(old), self._v(new))

    def open(self, path, flags):
        # Offsets come from the kernel: O_APPEND would make pwrite ignore them.
        fd = os.open(self._v(path), flags & ~os.O_APPEND)
        self.handles[fd] = self._id(self._v(path))
        if flags & os.O_TRUNC:
            self.dirty.setdefault(self.handles[fd], [])
        return fd

    def create(self, path, mode, fi=None):
        fd = os.open(self._v(path), os.O_RDWR | os.O_CREAT, mode)
        self.handles[fd] = self._id(self._v(path))
        return fd

    def read(self, path, size, offset, fh):
        return os.pread(fh, size, offset)

    def write(self, path, data, offset, fh):
        written = os.pwrite(fh, data, offset)
        self._written(self.handles[fh], offset, written)
        return written

    def truncate(self, path, length, fh=None):
        if fh is not None:
            os.ftruncate(fh, length)
            node_id = self.handles[fh]
        else:
            os.truncate(self._v(path), length)
            node_id = self._id(self._v(path))
        self.dirty.setdefault(node_id, [])

    def flush(self, path, fh):
        return 0  # close() is not fsync(): nothing reaches the disk here

    def release(self, path, fh):
        self.handles.pop(fh, None)
        os.close(fh)

    def fsync(self, path, datasync, fh):
        self.counts['fsyncs'] += 1
        self._sync_file(self.handles[fh], fh)

    def fsyncdir(self, path, datasync, fh):
        self.counts['dirFsyncs'] += 1
        self._sync_dir(self._v(path))


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    state_dir, mountpoint = sys.argv[1], sys.argv[2]
    # The kernel applied the caller's umask to every mode it sends already.
    os.umask(0)
    FUSE(LazyFS(state_dir), mountpoint, foreground=True, nothreads=True, hard_remove=True)


if __name__ == '__main__':
    main()
