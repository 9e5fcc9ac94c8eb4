"""evring: shared-memory event rings from Python.

    import evring

    with evring.open("feed") as reader:               # ring name or path, snapshot, recording
        for event in reader.replay(start="oldest"):    # ends at the newest event (end of a file)
            print(event.seqno, event.type_name, event.fields)
        print(reader.lost, reader.gaps)                # exactly what the C++ iterator counts

    for event in evring.open("feed").follow(timeout=5.0):   # waits (GIL released), ends after 5 s idle
        ...

    batch = reader.read_batch(100_000)                 # numpy structured array, no object per event
    batch.events["seqno"], batch.members, batch.payload(0)   # members: a ring set's member column

    with evring.create("/dev/shm/mine", descriptor_shift=16, payload_shift=24, schema="orders.toml") as w:
        w.record("ORDER_NEW", payload_bytes, flow=(symbol, order_id))   # None: no reader wants it
        if w.wants("BOOK"):                                             # interest: skip building it
            w.record("BOOK", levels=expensive_levels())
        w.record_many("QUOTE", quotes)       # a list, or a numpy structured array: batches of up to 64

Errors raise evring.Error with the library's message. docs/python.md has the rest.
"""

import os as _os

from ._evring import DESCRIPTOR_DTYPE, READS_STREAMS, Batch, Error, Event, Reader, WaitSet, Writer, __version__
from ._evring import create as _create
from ._evring import open as _open
from ._evring import _KIND_RECORD, _wait_for_name

__all__ = ["Batch", "Error", "Event", "Reader", "WaitSet", "Writer", "create", "open", "record", "DESCRIPTOR_DTYPE",
           "READS_STREAMS"]


def open(source, schema=None, max_snapshot_size=0, register=True, name="python", detail=None, wait=None,
         keywords=None, level=None, heal=None, heal_wait=None, named=None, start=None, reset=False):
    """Opens a ring (a name in the ring directory, or a path), a ring set
    (merged in time order; each event has its `member`), a snapshot or a
    recording, as the evring CLI does. `schema`: a schema file to decode with
    (it must describe the source's header); by default the source's own
    embedded schema, else a built-in one.

    A reader of a live ring announces itself in the ring's reader registry
    (`evring readers RING` lists it with its lag) as `name`, with `detail`
    (default: the program, sys.argv[0]); register=False stays out of it. When
    it cannot register, it reads anyway and says why in `reader.notices`.

    `keywords` (a list of the schema's keyword names, or "a,b") and `level`
    (0..15): the events this reader wants (docs/interest.md). A registered
    reader of a live ring, or of every member of a live ring set, registers
    them, and writers' typed writes skip events no registered reader wants.
    Neither (the default): everything.

    `wait`: when the ring does not exist yet, wait for a writer to create it:
    a number of seconds, or True for no limit (Ctrl-C still interrupts);
    evring.Error when it did not appear in time. None (default): raise at once.

    `heal`: a reader of a live ring or ring set that falls behind the writer
    (lapped) reads the events it missed from a recording of the same ring,
    then goes on in the ring (docs/healing.md): True finds a running `evring
    record` of the ring in its reader registry, a path names the recording.
    `heal_wait`: seconds a recording that has not caught up is waited for
    (default 3). `reader.counters()["healed"]` counts what came from it.

    `named`: a durable name (docs/named-readers.md; `name` is the registry
    label): the reader resumes after the position this name last committed
    (reader.commit()), and takes the name's lock while open. `start` is the
    first run's start ("oldest" by default; "latest", a seqno, a time), and
    reset=True forgets the position and starts there again. replay() and
    follow() without a start keep the resumed position; `reader.notices` says
    where it resumed and what comes again, `reader.redelivered` counts it.

    A bad argument raises evring.Error naming it and saying why."""
    source = _path(source, "source")
    if wait is not None and wait is not False:
        _wait_until_named(source, None if wait is True else _seconds(wait, "wait"))
    if schema is not None:
        schema = _path(schema, "schema")
    if detail is None:
        import sys as _sys
        detail = _os.path.basename(_sys.argv[0]) if _sys.argv and _sys.argv[0] else ""
    if keywords is not None and not isinstance(keywords, str):
        keywords = ",".join(_keyword(k, f"keywords[{i}]") for i, k in enumerate(_iterable(keywords, "keywords")))
    if heal is not None and not isinstance(heal, bool):
        heal = _path(heal, "heal")
    heal_wait = 0.0 if heal_wait is None else _seconds(heal_wait, "heal_wait")
    if heal_wait == float("inf"):
        heal_wait = 3600.0
    if named is not None and not isinstance(named, str):
        raise Error(f"named: give a reader name (str), not {type(named).__name__}")
    if not isinstance(reset, bool):
        raise Error(f"reset: give True or False, not {type(reset).__name__}")
    if named is None and (start is not None or reset):
        raise Error(f"{'start' if start is not None else 'reset'}: only for a named reader (named=...); "
                    "an unnamed reader starts where replay() or follow() say")
    if start is not None and (isinstance(start, bool) or not isinstance(start, (str, int))):
        raise Error(f"start: give \"oldest\", \"latest\", a seqno, \"-N\" or a time, not {type(start).__name__}")
    reader = _open(source, schema, max_snapshot_size, bool(register), name, detail, keywords, level, heal,
                   heal_wait)
    if named is not None:
        try:
            reader._resume_named(named, start, reset)
        except BaseException:
            reader.close()
            raise
    return reader


def record(source, output, *, start=None, count=None, until=None, where=None, compress=True, level=None,
           rotate_size=None, threads=None, schema=None, register=True, wait=None):
    """Records `source` (a ring, ring set, snapshot, recording or stream)
    into a new recording file `output`, as `evring record SOURCE -o OUTPUT`
    does, through the same library pipeline: every event with its payload,
    and a gap marker with its reason for every sequence number not captured.

    It starts at `start` ("oldest", "latest", a seqno, "-N", a time,
    "block:N"); by default a live ring's newest event (what comes next) and a
    file's oldest. `where` records only the events an expression keeps
    (docs/cli.md). It ends after `count` events, past `until` (a seqno, a
    time, "block:N"), at the end of a snapshot, recording or stream, or on
    Ctrl-C (the file is finished, then KeyboardInterrupt is raised).
    `compress`: zstd at `level` (1..19, default 1) on `threads` threads (1..64,
    default 1); `rotate_size`: bytes after which the recording goes on in
    OUTPUT.1, OUTPUT.2, ...

    A recorder of a live ring is listed in the ring's reader registry as
    `record` with its output, as the CLI's is, so lapped readers that heal
    (docs/healing.md) find it; register=False stays out. `wait`: as open().

    Returns the totals as a dict: events, expired, lost, gaps, files,
    last_file and ended ("count", "until", "end", "stopped")."""
    output = _path(output, "output")
    source = _path(source, "source")
    if wait is not None and wait is not False:
        _wait_until_named(source, None if wait is True else _seconds(wait, "wait"))
    if schema is not None:
        schema = _path(schema, "schema")
    if start is not None and (isinstance(start, bool) or not isinstance(start, (str, int))):
        raise Error(f"start: give \"oldest\", \"latest\", a seqno, \"-N\" or a time, not {type(start).__name__}")
    detail = "-> " + _os.path.abspath(output)
    with _open(source, schema, 0, bool(register), "record", detail, None, None, None, 0.0, _KIND_RECORD) as reader:
        if start is not None:
            reader.seek(start)
        if where is not None:
            reader.set_where(where)
        return reader.record(output, count=count, until=until, compress=compress, level=level,
                             rotate_size=rotate_size, threads=threads)


def _path(value, what):
    """os.fspath(value), refused as evring.Error naming `what`."""
    try:
        return _os.fspath(value)
    except TypeError:
        raise Error(f"{what}: give a path or a name (str, bytes or os.PathLike), not {type(value).__name__}") from None


def _shown(value, limit=64):
    """repr(value) for a message: at most `limit` characters, then its length."""
    text = repr(value) if not isinstance(value, int) or abs(value) < 10**limit else f"an int of {value.bit_length()} bits"
    return text if len(text) <= limit else f"{text[:limit]}...({len(text)} characters)"


def _seconds(value, what):
    """A number of seconds, 0 or more (inf: no limit); NaN, a bool or a str is refused."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Error(f"{what}: give seconds (an int or a float) or True, not {type(value).__name__}")
    if not value >= 0:   # NaN too: every comparison with it is false, and a deadline never came
        raise Error(f"{what}: {_shown(value)} is not a number of seconds, 0 or more")
    try:
        return float(value)
    except OverflowError:   # an int past what a float holds: no limit
        return float("inf")


def _iterable(value, what):
    try:
        return iter(value)
    except TypeError:
        raise Error(f"{what}: give a list of keyword names or one str \"a,b\", not {type(value).__name__}") from None


def _keyword(value, what):
    if not isinstance(value, str):
        raise Error(f"{what}: give a str, not {type(value).__name__}")
    return value


def _wait_until_named(location, seconds):
    import math as _math
    import time as _time
    deadline = None if seconds is None or _math.isinf(seconds) else _time.monotonic() + seconds
    while True:
        left = 0.2 if deadline is None else max(0.0, min(0.2, deadline - _time.monotonic()))
        if _wait_for_name(location, left):   # the GIL is released; signals are seen between slices
            return
        if deadline is not None and _time.monotonic() >= deadline:
            raise Error(f"ring {_shown(location, 200)} was not created within {seconds:g} s")


def create(name, descriptor_shift=20, payload_shift=28, content_type=None, schema=None, shared=False, keep=False,
           check_raw=False):
    """Creates a ring and returns its Writer. `name`: a name in the ring
    directory, or a path. Sizes are 2**descriptor_shift descriptors and
    2**payload_shift payload bytes. `schema`: a schema file path or schema
    text; it sets the content type and hash and is embedded in the ring,
    and Writer.record checks every event against it. check_raw=True checks
    Writer.record_raw too. The file is removed when the writer closes unless
    keep=True. A bad argument raises evring.Error naming it and saying why."""
    if schema is not None and not isinstance(schema, str):
        schema = _path(schema, "schema")
    return _create(_path(name, "name"), descriptor_shift, payload_shift, content_type, schema, bool(shared),
                   bool(keep), bool(check_raw))
