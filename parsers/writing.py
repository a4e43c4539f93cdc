"""The files the tool writes (exports, screenshots): never over a file it reads, never half
written, never through a symlink or into a FIFO.

Every file is written to a temporary file in the target's own folder, flushed to disk, then
renamed over the target: a failure (a full disk, an interrupt) leaves the old file whole and
the temporary one removed. Where the file system allows (Linux's O_TMPFILE: ext4, xfs, btrfs,
tmpfs), the temporary file has no name until it is whole: a process killed while it writes
(SIGKILL, the OOM killer) leaves nothing behind either. A target that is, by path, symlink or
hard link, the same file as an input is refused before anything is written.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, TypeVar

from parsers.errors import CuzkError
from parsers.regular import kind_of

STDIN = Path("-")  # an input read from standard input (its descriptor is compared)
T = TypeVar("T")
NEW_NAME_TRIES = 1000  # `name-2.json` … before an exclusive new file gives up


MAX_LINKS = 40  # symlinks followed to an output's file, as the kernel's limit


class WriteRefused(CuzkError, OSError):
    """A target the tool will not write: an input, not a regular file, or a bad path.

    Its message is one line that names the target.
    """


def output_path(raw: str) -> Path:
    """The path the user gave for an output, `~` expanded, made absolute.

    Raises:
        WriteRefused: the current folder no longer exists (a relative path means nothing), or
            `~user` names no user with a home folder.
    """
    try:
        path = Path(raw).expanduser()
    except RuntimeError:  # `~nosuchuser/x`, or `~` where HOME and the user's entry are gone
        raise WriteRefused(f"{raw}: no home folder for {raw.split('/')[0]}") from None
    if path.is_absolute():
        return path
    try:
        return Path(os.getcwd()) / path
    except OSError:  # FileNotFoundError: the working directory was deleted
        raise WriteRefused(
            f"{raw}: the current folder no longer exists (give an absolute path)"
        ) from None


def _identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of what `path` names, through symlinks; None when it cannot be seen."""
    try:
        st = os.fstat(0) if path == STDIN else os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def same_file(a: Path, b: Path) -> bool:
    """`a` and `b` name one file: the same name, or the same file through links."""
    return a == b or _identity(a) == _identity(b) is not None


def through_links(target: Path) -> Path:
    """The file `target` names once its symlinks are followed, as `>` writes through them
    (a link to a name that does not exist yet: that name). The path is walked a name at a
    time, as the kernel walks it: every link met, a folder's too, is followed where it is
    (`..` after a link goes up from where it led) and judged (`_check_link_owner`).

    Raises:
        WriteRefused: a link into /proc (`/dev/stdout`, `/dev/fd/1`): it names a process's
            descriptor, whose file replaced would lose what it held (`>> file`); a link
            another user made in a shared folder; or a loop.
    """
    # not os.path.abspath, which drops `link/..` by the names alone
    given = str(target) if os.path.isabs(target) else os.path.join(os.getcwd(), str(target))
    pending = [name for name in given.split("/") if name]
    resolved = "/"
    links = 0
    while pending:
        name = pending.pop(0)
        if name == ".":
            continue
        if name == "..":
            resolved = os.path.dirname(resolved)
            continue
        path = os.path.join(resolved, name)
        if path == "/proc" or path.startswith("/proc/"):
            raise WriteRefused(
                f"will not write {target}: it is in /proc (a process's descriptors, "
                "the kernel's files), not a file"
            )
        if not os.path.islink(path):
            resolved = path
            continue
        links += 1
        if links > MAX_LINKS:
            raise WriteRefused(f"cannot write {target}: too many levels of symbolic links")
        _check_link_owner(target, path)
        led = os.readlink(path)
        if led.startswith("/"):
            resolved = "/"
        pending[:0] = [part for part in led.split("/") if part]
    return Path(resolved)


def _check_link_owner(target: Path, link: str) -> None:
    """Refuse a link that another user made in a folder anyone may write in and only
    owners may delete from (sticky and world-writable: /tmp), as the kernel's
    protected_symlinks refuses to follow it: there, `--export-trace /tmp/t.json` would
    replace whatever file another user pointed the link at. A link of the user's own, or
    of the folder's owner, is followed.

    Raises:
        WriteRefused: such a link.
    """
    try:
        folder = os.stat(os.path.dirname(link))
        owner = os.lstat(link).st_uid
    except OSError:
        return  # gone meanwhile: what follows sees it
    shared = folder.st_mode & stat.S_ISVTX and folder.st_mode & stat.S_IWOTH
    if shared and owner not in (os.geteuid(), folder.st_uid):
        raise WriteRefused(
            f"will not write {target}: a link another user made in {os.path.dirname(link)}, "
            "a folder anyone may write in (the kernel's protected_symlinks refuses it too)"
        )


def check_target(target: Path, inputs: Sequence[Path]) -> None:
    """Refuse a target that is an input (by path, symlink or hard link) or that exists and
    is not a regular file (a FIFO would block for ever, a device is no place for a file).

    Raises:
        WriteRefused: with a one-line reason.
    """
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise WriteRefused(f"cannot write {target}: {exc.strerror or exc}") from None
    if st is not None:
        what = kind_of(st.st_mode)
        if what is not None:
            raise WriteRefused(f"will not write {target}: it is {what}, not a regular file")
    ident = (st.st_dev, st.st_ino) if st is not None else None
    for source in inputs:
        same = ident is not None and _identity(source) == ident
        if same or _resolved(source) == _resolved(target):
            shown = "standard input" if source == STDIN else str(source)
            raise WriteRefused(
                f"will not write {target}: it is the log being read ({shown}); choose another name"
            )


def _resolved(path: Path) -> Path | None:
    if path == STDIN:
        return None
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return None


def check_folder(folder: Path) -> None:
    """Refuse a folder to write into that exists and is not a folder.

    Raises:
        WriteRefused: with a one-line reason.
    """
    if folder.exists() and not folder.is_dir():
        raise WriteRefused(f"not a folder: {folder}")


def _umask() -> int:
    """The process's umask, read without changing it (other threads may be creating files)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def open_nameless(folder: Path) -> int | None:
    """A new file in `folder`, open for reading and writing, that has no name from the start
    (Linux's O_TMPFILE): a process killed while it holds it leaves nothing behind. None where
    the file system, the kernel or a sandbox does not make one (the caller makes a named one).

    Raises: OSError: the folder cannot be written.
    """
    flag = getattr(os, "O_TMPFILE", 0)
    if not flag or not os.path.isdir("/proc/self/fd"):  # without /proc it cannot be opened again
        return None
    try:
        return os.open(folder, flag | os.O_RDWR | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        if exc.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.EPERM, errno.ENOSYS):
            return None
        raise


class OutputBatch:
    """Files written as one: each to a temporary file beside its target, and all of them
    renamed into place only once every one is written whole (a failure in the third leaves
    the first two targets as they were, not a mix of old and new files).

    Use as a context manager: leaving it normally commits, an exception discards.

    Args:
        inputs: the files read, which no target may be.
        exclusive: every target must be new (never replace a file, nor follow a symlink).
    """

    def __init__(self, inputs: Sequence[Path] = (), exclusive: bool = False) -> None:
        self.inputs = tuple(inputs)
        self.exclusive = exclusive
        self._written: list[tuple[_Temporary, Path]] = []  # (temporary, target)

    def __enter__(self) -> OutputBatch:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if kind is None:
            self.commit()
        else:
            self.discard()

    @contextlib.contextmanager
    def open(self, target: Path, binary: bool = False) -> Iterator[IO[Any]]:
        """A file to write `target` through (text: UTF-8, newlines as written).

        Raises:
            WriteRefused: `target` is an input, or not a regular file.
            FileExistsError: `exclusive` and `target` exists.
            OSError: the write failed (the temporary file is removed).
        """
        if not self.exclusive:
            # a symlink is written through, as `>` writes: the file it names is replaced,
            # never the link itself (`/dev/stdout` renamed over was a file in /dev)
            target = through_links(target)
        check_target(target, self.inputs)
        for _, written in self._written:
            if same_file(written, target):
                # the later file would replace the earlier one's text at the commit
                raise WriteRefused(f"will not write {target}: it is written once already")
        if self.exclusive and os.path.lexists(target):
            raise FileExistsError(errno.EEXIST, "file exists", str(target))
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)  # a replaced file keeps its mode
        except OSError:
            mode = 0o666 & ~_umask()
        tmp = _Temporary.beside(target)
        fd = -1
        try:
            fd = os.dup(tmp.fd)
            fh: IO[Any] = (
                os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="")
            )
        except BaseException:
            if fd >= 0:
                os.close(fd)
            tmp.remove()
            raise
        try:
            with fh:
                os.fchmod(fh.fileno(), mode)
                yield fh
                fh.flush()
                os.fsync(fh.fileno())
        except BaseException:
            tmp.remove()
            raise
        self._written.append((tmp, target))

    def commit(self) -> None:
        """Put every written file in its target's place: all of them, or none (a target
        that cannot be replaced, an interrupt: those already in place are put back)."""
        try:
            for _, target in self._written:
                check_target(target, self.inputs)  # again: it may have changed meanwhile
            if not self.exclusive:
                for tmp, _ in self._written:
                    tmp.named()  # every name first: a failure here has replaced nothing
            with _signals_held():
                self._swap()
        finally:
            self.discard()

    def _swap(self) -> None:
        """Each written file over its target, each old file kept until all are in place."""
        targets = [target for _, target in self._written]
        kept: list[_Kept] = []  # by target, as far as kept
        placed = 0  # the first targets, new
        try:
            if not self.exclusive:
                for target in targets:
                    kept.append(_Kept.of(target))
            for tmp, target in self._written:
                if self.exclusive:
                    _link_new(tmp, target)
                else:
                    os.replace(tmp.named(), target)
                    tmp.path = None  # in place: nothing to remove
                placed += 1
        except BaseException as exc:
            stranded: list[tuple[Path, Path]] = []  # (target, where its old file is)
            for k, target in reversed(list(enumerate(targets))):
                old = kept[k] if k < len(kept) else None
                try:
                    if old is not None and old.path is not None and (k < placed or old.moved):
                        old.put_back(target)  # new over it, or moved aside for it
                    elif k < placed and (old is None or old.path is None):
                        target.unlink()  # no file was there
                except OSError:
                    if old is not None and old.path is not None:
                        old.stays = True  # never removed: the user's file, under that name
                        stranded.append((target, old.path))
            if stranded:
                raise PartlyWritten(exc, stranded) from exc
            raise
        finally:
            for old in kept:
                old.remove()

    def discard(self) -> None:
        """Remove every temporary file not yet in place."""
        for tmp, _ in self._written:
            tmp.remove()
        self._written.clear()


class _Kept:
    """A target's old file, kept under a hidden name of its own until the new one is in
    place (a hard link: the target stays in place meanwhile; where the file system has
    none, the file renamed aside). None when there was none."""

    def __init__(self, path: Path | None, moved: bool) -> None:
        self.path, self.moved = path, moved
        self.stays = False  # it could not be put back: left where it is, named to the user

    @classmethod
    def of(cls, target: Path) -> _Kept:
        """Keep `target`'s file (OSError: it cannot be kept, nor then replaced; a target
        that became something else than a regular file is refused, never moved aside)."""
        try:
            mode = os.lstat(target).st_mode
        except FileNotFoundError:
            return cls(None, False)
        if not stat.S_ISREG(mode):
            raise WriteRefused(f"{target}: not a regular file")
        import secrets

        for _ in range(NEW_NAME_TRIES):
            name = hidden_name(target, f"{secrets.token_hex(4)}.old")
            try:
                os.link(target, name, follow_symlinks=False)
                return cls(name, False)
            except FileExistsError:
                continue
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EMLINK, errno.ENOSYS):
                    raise
            # no hard link to be had (an immutable file, a file system without them): renamed
            # aside, or refused as the rename over it would be
            if os.path.lexists(name):
                continue
            os.rename(target, name)
            return cls(name, True)
        raise FileExistsError(errno.EEXIST, "no free name to keep the old file", str(target))

    def put_back(self, target: Path) -> None:
        """The old file at `target` again."""
        assert self.path is not None
        os.replace(self.path, target)
        self.path = None

    def remove(self) -> None:
        """Let the old file go (a link: the name alone; moved aside and not put back: the new
        file is in its place), unless it could not be put back (`stays`)."""
        if self.path is not None and not self.stays:
            with contextlib.suppress(OSError):
                self.path.unlink()
            self.path = None


class PartlyWritten(OSError):
    """A batch that failed and could not put every old file back: where each one is now."""

    def __init__(self, cause: BaseException, stranded: Sequence[tuple[Path, Path]]) -> None:
        kept = "; ".join(f"the old {t.name} is kept as {p}" for t, p in stranded)
        why = cause.strerror if isinstance(cause, OSError) and cause.strerror else str(cause)
        super().__init__(f"{why or type(cause).__name__}; {kept}")
        self.stranded = tuple(stranded)


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """ctrl+c, SIGTERM and SIGHUP wait until the files are swapped, then act as they would
    have: one that came between two renames left the first targets new and the rest old.
    Their handlers are put aside (a signal mask would not do: the kernel gives a signal to
    any thread that does not block it, numpy's too, and Python runs its handler here);
    off the main thread no handler runs here, and nothing is needed."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []

    def note(signum: int, frame: object) -> None:
        caught.append(signum)

    before = {
        sig: signal.signal(sig, note) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    }
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
        for signum in dict.fromkeys(caught):
            signal.raise_signal(signum)  # as it came, to the handler it would have found


# a file's name holds at most this many bytes (NAME_MAX on Linux's file systems)
NAME_BYTES = 255


def hidden_name(target: Path, tail: str) -> Path:
    """`.NAME.TAIL` beside `target`, NAME cut short where the whole would not fit in a name
    (a 250-byte name could be exported to by no temporary file)."""
    name = target.name
    while len(os.fsencode(f".{name}.{tail}")) > NAME_BYTES and name:
        name = name[:-1]
    return target.parent / f".{name}.{tail}"


class _Temporary:
    """A file being written beside its target: without a name while it is written where
    the file system allows (O_TMPFILE), else a hidden `.NAME.XXXXXXXX.tmp`. Its descriptor is
    held until it is put in place or removed."""

    def __init__(self, fd: int, folder: Path, prefix: str, path: Path | None) -> None:
        self.fd, self.folder, self.prefix, self.path = fd, folder, prefix, path

    @classmethod
    def beside(cls, target: Path) -> _Temporary:
        """A new temporary file in `target`'s folder."""
        prefix = hidden_name(target, "XXXXXXXX.tmp").name[: -len("XXXXXXXX.tmp")]
        fd = open_nameless(target.parent)
        if fd is not None:
            return cls(fd, target.parent, prefix, None)
        import tempfile  # here: the report's start does not pay for its imports

        fd, name = tempfile.mkstemp(dir=target.parent, prefix=prefix, suffix=".tmp")
        return cls(fd, target.parent, prefix, Path(name))

    def named(self) -> Path:
        """The file under a hidden name of its own in the target's folder (given one now if
        it had none), to be renamed over the target."""
        if self.path is None:
            try:
                self.path = self.link_to_free_name()
            except OSError as exc:
                if exc.errno == errno.EEXIST:
                    raise
                self.path = self._copied()  # no hard links here: its bytes, under a name
        return self.path

    def _copied(self) -> Path:
        """A named copy of the file (a file system that makes files without a name and
        gives them none: some FUSE)."""
        import shutil
        import tempfile

        fd, name = tempfile.mkstemp(dir=self.folder, prefix=self.prefix, suffix=".tmp")
        try:
            os.fchmod(fd, stat.S_IMODE(os.fstat(self.fd).st_mode))
            with open(os.dup(self.fd), "rb") as src, open(fd, "wb", closefd=False) as dst:
                src.seek(0)
                shutil.copyfileobj(src, dst)
                dst.flush()
                os.fsync(fd)
        except BaseException:
            os.close(fd)
            Path(name).unlink(missing_ok=True)
            raise
        os.close(fd)
        return Path(name)

    def link_to(self, name: Path) -> None:
        """Give the file the name `name`, which must not exist (EEXIST; never followed)."""
        if self.path is not None:
            os.link(self.path, name)
            return
        # linkat(AT_SYMLINK_FOLLOW) on the descriptor's /proc entry (open(2)'s way to name an
        # O_TMPFILE file); a directory descriptor makes Python call linkat, not link, which
        # would link the /proc entry itself
        procfd = os.open("/proc/self/fd", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.link(str(self.fd), name, src_dir_fd=procfd, follow_symlinks=True)
        finally:
            os.close(procfd)

    def link_to_free_name(self) -> Path:
        import secrets

        for _ in range(NEW_NAME_TRIES):
            name = self.folder / f"{self.prefix}{secrets.token_hex(4)}.tmp"
            try:
                self.link_to(name)
            except FileExistsError:
                continue
            return name
        raise FileExistsError(errno.EEXIST, "no free temporary name", str(self.folder))

    def remove(self) -> None:
        """Close it and take its name away, if it has one (a file without one is gone)."""
        with contextlib.suppress(OSError):
            os.close(self.fd)
        self.fd = -1
        if self.path is not None:
            with contextlib.suppress(OSError):
                self.path.unlink()
            self.path = None


@contextlib.contextmanager
def atomic_output(
    target: Path,
    inputs: Sequence[Path] = (),
    *,
    binary: bool = False,
    exclusive: bool = False,
) -> Iterator[IO[Any]]:
    """One file written through an OutputBatch: whole at `target` once the body ends, or
    not at all (the old file, if any, left whole).

    Raises:
        WriteRefused: `target` is an input, or not a regular file.
        FileExistsError: `exclusive` and `target` exists.
        OSError: the write failed.
    """
    with OutputBatch(inputs, exclusive) as batch, batch.open(target, binary) as fh:
        yield fh


def _link_new(tmp: _Temporary, target: Path) -> None:
    """Move the written file `tmp` to the name `target`, which must not exist (a symlink
    planted there is not followed: link() fails on any existing name)."""
    try:
        tmp.link_to(target)
    except OSError as exc:
        if exc.errno == errno.EEXIST:
            raise
        # no hard links on this file system (FAT, some FUSE): claim the name exclusively,
        # then rename over our own empty claim (the file named first: naming it may fail,
        # and must not leave the claim)
        named = tmp.named()
        claim = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        os.close(claim)
        try:
            os.replace(named, target)
        except BaseException:
            with contextlib.suppress(OSError):
                target.unlink()  # our own empty claim, not left as if written
            raise
        tmp.path = None  # in place: nothing to remove
        return
    tmp.remove()


def safe_stem(text: str) -> str:
    """`text` as part of a file name: letters, digits, `.`, `_` and `-` kept, each run of the
    rest one `_` (`a.log + b.log`: `a.log_b.log`, not `a.log___b.log`)."""
    kept = "".join(c if c.isascii() and (c.isalnum() or c in "._-") else " " for c in text)
    return "_".join(kept.split()).strip(".")[:80] or "log"


def write_new(folder: Path, stem: str, suffix: str, write: Callable[[Path], T]) -> tuple[Path, T]:
    """`write(path)` with the first free name of `folder/stem.suffix`, `stem-2.suffix` …;
    `write` creates its file exclusively (atomic_output's `exclusive`), so a name taken
    between the look and the write is never overwritten: the next one is tried.

    Returns:
        The path written, and what `write` returned.
    """
    for n in range(1, NEW_NAME_TRIES + 1):
        path = folder / (f"{stem}{suffix}" if n == 1 else f"{stem}-{n}{suffix}")
        if os.path.lexists(path):
            continue
        try:
            return path, write(path)
        except FileExistsError:
            continue  # taken meanwhile
    raise WriteRefused(f"no free name for {stem}{suffix} in {folder}")


def write_text_new(path: Path, text: str, inputs: Sequence[Path] = ()) -> None:
    """Write `text` as the new file `path` (see write_new)."""
    with atomic_output(path, inputs, exclusive=True) as fh:
        fh.write(text)
