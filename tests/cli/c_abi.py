"""The C ABI through ctypes for the CLI scripts' drivers (named readers of streams and sets):
`load(path)` gives libevring.so with the signatures used here, `read_named(...)` one run of a
named reader. A shared module, so each script's driver holds only what it checks."""
import ctypes
import sys

ITEM_SIZE = 128   # sizeof(evring_item)
MEMBER, SEQNO = 4, 8  # offsets of evring_item.member and evring_item.event.seqno
EVENT, NOT_READY = 0, 3  # evring_step


def load(path):
    lib = ctypes.CDLL(path)
    lib.evring_source_open.restype = ctypes.c_void_p
    lib.evring_source_open.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    lib.evring_source_resume_named.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
    lib.evring_source_error.restype = ctypes.c_char_p
    lib.evring_source_error.argtypes = [ctypes.c_void_p]
    lib.evring_source_close.argtypes = [ctypes.c_void_p]
    lib.evring_source_commit.argtypes = [ctypes.c_void_p]
    lib.evring_source_next.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
    lib.evring_source_wait.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
    return lib


def read_named(lib, location, name, count, stop_when_idle=False):
    """Reads up to `count` events as reader `name` (from the oldest on a first run), commits,
    closes; their (member, seqno) pairs. `stop_when_idle`: stop at NOT_READY or END (a ring
    whose writers are done), else wait at NOT_READY (a stream)."""
    item = ctypes.create_string_buffer(512)
    ctypes.c_uint32.from_buffer(item, 0).value = ITEM_SIZE
    src = lib.evring_source_open(location.encode(), None)
    if not src:
        sys.exit(f"opening {location} failed")
    if lib.evring_source_resume_named(src, name.encode(), b"oldest", 0) != 0:
        sys.exit(f"reader {name}: {lib.evring_source_error(src).decode()}")
    got = []
    while len(got) < count:
        step = lib.evring_source_next(src, item, 1)
        if step == EVENT:
            got.append((ctypes.c_uint32.from_buffer(item, MEMBER).value, ctypes.c_uint64.from_buffer(item, SEQNO).value))
        elif step == NOT_READY and not stop_when_idle:
            lib.evring_source_wait(src, 100_000_000)
        elif step >= NOT_READY:
            if not stop_when_idle:
                sys.exit(f"reader {name}: step {step}: {lib.evring_source_error(src).decode()}")
            break
    if lib.evring_source_commit(src) != 0:
        sys.exit(f"reader {name}: commit: {lib.evring_source_error(src).decode()}")
    lib.evring_source_close(src)
    return got
