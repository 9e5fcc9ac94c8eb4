/* evring/evring.h — the C ABI: evring from C and from any language with a C FFI.
 *
 * How to read any source (a ring name or path, a ring set, a snapshot, a
 * recording):
 *
 *     evring_source* src = evring_source_open("demo", NULL);
 *     if (src == NULL) { fprintf(stderr, "%s\n", evring_last_error()); exit(1); }
 *     evring_source_seek(src, "oldest");
 *     evring_item item = {.struct_size = sizeof item};
 *     for (;;) {
 *         switch (evring_source_next(src, &item, EVRING_READ_PAYLOAD)) {
 *         case EVRING_STEP_EVENT:     use(item.member, &item.event, item.payload, item.payload_size); break;
 *         case EVRING_STEP_GAP:       note(item.member, item.gap_first_seqno, item.gap_count, item.gap_reason); break;
 *         case EVRING_STEP_NOTICE:    log(item.text); break;
 *         case EVRING_STEP_NOT_READY: evring_source_wait(src, 100000000); break;  // the doorbell
 *         case EVRING_STEP_END:       goto done;
 *         default:                    fail(evring_source_error(src));
 *         }
 *     }
 *     done: evring_source_close(src);
 *
 * and how to write (examples/c_reader_writer.c does both):
 *
 *     evring_writer_options o; evring_writer_options_init(&o);
 *     o.name = "demo"; o.descriptor_shift = 10; o.payload_shift = 20;
 *     evring_writer* w = evring_writer_create(&o);
 *     evring_reservation r = {.struct_size = sizeof r};
 *     if (evring_writer_reserve(w, 16, &r) == EVRING_OK) {
 *         memcpy(r.payload, bytes, 16); r.event_type = 7; r.content_ext[0] = 42;
 *         evring_writer_commit(w, &r);
 *     }
 *
 * Contract:
 * - The C++ library (the headers beside this one) does the work: sources are the
 *   event sources of event_source.hpp and source_open.hpp (the same sequence
 *   order, exact gaps with their reasons, notices and counters), writers are
 *   RingWriter + Publisher. No C++ type or exception crosses this header:
 *   handles are opaque, plain structs are fixed-layout, and every function
 *   catches what the C++ side throws (an allocation failure) and returns
 *   EVRING_E_NOMEM.
 * - Errors: functions return an evring_status (0 is success, negative values
 *   are errors) or NULL. The message of the last failure on a handle is
 *   evring_source_error / evring_writer_error; a failure that leaves no handle
 *   (open, create) sets this thread's evring_last_error. Messages name the
 *   file or value and the reason, as the C++ library's errors do; what they
 *   echo is escaped (control bytes and bytes that are not UTF-8 as \xNN)
 *   and a message past 1024 bytes keeps its start and end (docs/c-api.md).
 * - Pointers a call returns into a handle (item.payload, item.text, error
 *   messages, type names) stay valid until the next call on that handle.
 * - Hot paths (next, next_batch, peek, copy, reserve, commit) neither
 *   allocate nor make system calls, except that next on a recording reads
 *   the file (and a ring set's re-reads its manifest every 10 ms at most).
 *   A registered reader publishes its position with a few stores.
 * - How the ABI grows (docs/c-api.md, "Versions"): every struct a caller
 *   allocates starts with `uint32_t struct_size`, the size of the struct as
 *   the caller's header has it: the _init functions set it, or write
 *   `evring_item item = {.struct_size = sizeof item};`. Fields are only ever
 *   added at the end. The library reads (options) and writes (results) only the first
 *   struct_size bytes, so a program built against an older, smaller struct
 *   keeps working: fields it does not know take their defaults. Results come
 *   back with struct_size set to the bytes the library filled (less than the
 *   caller's when the library is older than the caller's header). A
 *   struct_size below the struct's first versioned size (0, a struct never
 *   initialised) is refused with EVRING_E_INVALID and a message naming it.
 *   EVRING_VERSION_* say which header a program was built with,
 *   evring_version() which library it runs with.
 *
 * Thread safety: a source handle is used by one thread at a time; any number
 * of handles over one ring, in any threads or processes, are independent. A
 * writer handle may be used by any number of threads at once (reserve,
 * commit, abort, record, record_batch), except close; evring_writer_error is the
 * calling thread's last failure on it. evring_last_error is per thread.
 */
#ifndef EVRING_EVRING_H
#define EVRING_EVRING_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#define EVRING_ALIGNAS(n) alignas(n)
#else
#define EVRING_ALIGNAS(n) _Alignas(n)
#endif

#if defined(__GNUC__) || defined(__clang__)
#define EVRING_DEPRECATED(why) __attribute__((deprecated(why)))
#else
#define EVRING_DEPRECATED(why)
#endif

/* The version of this header. The build of the library refuses to configure
 * when these disagree with meson.build's project version, so they are the
 * library's version at build time; evring_version() is the one a program
 * runs with. */
#define EVRING_VERSION_MAJOR 0
#define EVRING_VERSION_MINOR 1
#define EVRING_VERSION_PATCH 0
/* MAJOR * 10000 + MINOR * 100 + PATCH: 100 for 0.1.0. */
#define EVRING_VERSION_NUMBER (EVRING_VERSION_MAJOR * 10000 + EVRING_VERSION_MINOR * 100 + EVRING_VERSION_PATCH)
/* 2: every struct a caller allocates starts with struct_size (see the contract). */
#define EVRING_ABI_VERSION 2

/* "0.1.0": the library's version at run time. */
const char* evring_version(void);
/* The same as EVRING_VERSION_NUMBER computes it. */
unsigned evring_version_number(void);

typedef enum evring_status {
    EVRING_OK = 0,
    EVRING_E_INVALID = -1,     /* a bad argument or value (the message names it) */
    EVRING_E_SYSTEM = -2,      /* a system call failed (evring_*_errno says which errno) */
    EVRING_E_FORMAT = -3,      /* a file is not what it claims, or is damaged */
    EVRING_E_NOMEM = -4,       /* out of memory */
    EVRING_E_TOO_SMALL = -5,   /* the caller's buffer is too small (*needed says how large) */
    EVRING_E_NO_SCHEMA = -6,   /* the source has no schema */
    EVRING_E_DECODE = -7,      /* the payload does not match its event type's layout */
    EVRING_E_EXPIRED = -8,     /* the payload was overwritten before it was read */
    EVRING_E_UNSUPPORTED = -9, /* not possible for this kind of source */
    EVRING_E_FAILED = -10,     /* the source failed (a ring truncated under the reader) */
    EVRING_E_TOO_LARGE = -11,  /* the payload is larger than the ring allows */
    /* Not an error (positive): a typed write of an event no registered reader
     * wants (interest, docs/interest.md) was skipped; nothing is published. */
    EVRING_NOT_WANTED = 1
} evring_status;

/* "invalid argument", ... for a status. */
const char* evring_status_name(int status);

/* The message of this thread's last failed open or create. */
const char* evring_last_error(void);

/* A RING01 event descriptor, byte for byte (64 bytes). */
typedef struct evring_descriptor {
    uint64_t seqno;
    uint16_t event_type;
    uint16_t reserved;
    uint32_t payload_size;
    uint64_t record_epoch_nanos;
    uint64_t payload_buf_offset;
    uint64_t content_ext[4];
} evring_descriptor;

/* ---- Sources ------------------------------------------------------------ */

typedef struct evring_source evring_source;

typedef enum evring_source_kind {
    EVRING_KIND_RING = 0,
    EVRING_KIND_SNAPSHOT = 1,
    EVRING_KIND_RECORDING = 2,
    EVRING_KIND_STREAM = 3,
    EVRING_KIND_RING_SET = 4   /* members merged in time order (docs/ring-sets.md) */
} evring_source_kind;

typedef struct evring_open_options {
    uint32_t struct_size;        /* sizeof(evring_open_options): set by _init */
    const char* schema_path;     /* a schema file to decode with, or NULL: the
                                    source's own (embedded), else a built-in one */
    uint64_t max_snapshot_size;  /* larger snapshots are refused; 0: the default */
    int recording_series;        /* a recording continues into FILE.1, ...; default 1 */
    /* Since 0.1.0 (ABI 2): a reader of a live ring announces itself in the
     * ring's reader registry, so `evring readers RING` lists it with its lag
     * (docs/operations.md). */
    int register_reader;         /* default 1; 0 stays out of the registry */
    const char* reader_name;     /* as listed; NULL: "c" */
    const char* reader_detail;   /* what it does with the events; NULL: the program's name */
    /* Since 0.1.0 (ABI 2), after reader_detail: interest (docs/interest.md).
     * A registered reader of a live ring or ring set says which events it
     * wants, so writers' typed writes skip events no registered reader wants.
     * Both at their defaults: everything (as a reader that says nothing). */
    const char* keywords;        /* "trades,quotes": keywords of the source's schema; NULL: every keyword */
    int level;                   /* the highest level wanted, 0..15; default -1: every level */
} evring_open_options;

void evring_open_options_init(evring_open_options* options);

/* Opens what `location` names, as the CLI does (source_open.hpp): a ring, a
 * ring set (its name or directory: read merged, each event with its member),
 * a snapshot or a recording, and, when the library was built with libnats, a
 * NATS stream "nats://HOST[:PORT]/STREAM" (docs/c-api.md); the schema is found then (see
 * evring_source_schema_json). A live ring's reader registers in its reader
 * registry, a live ring set's in every member's (evring_open_options.
 * register_reader; when it cannot, it reads anyway and the first item is a
 * notice saying why), with the interest the options give. NULL on failure
 * (an unknown keyword, interest asked of a snapshot or recording, ...):
 * evring_last_error says why. `options` may be NULL: the defaults. */
evring_source* evring_source_open(const char* location, const evring_open_options* options);
void evring_source_close(evring_source* source);

/* Waits up to `timeout_ns` for `location` to name something to open (a ring
 * a writer has not created yet; follow.hpp's wait_for_name), checking every
 * 100 ms: 1 once it does (at once when it already does), 0 when the time ran
 * out, EVRING_E_INVALID for a NULL location. UINT64_MAX waits without limit. */
int evring_wait_for_name(const char* location, uint64_t timeout_ns);

const char* evring_source_error(const evring_source* source);
int evring_source_errno(const evring_source* source);

typedef struct evring_source_info {
    uint32_t struct_size;          /* sizeof(evring_source_info) */
    int kind;                      /* an evring_source_kind */
    int live;                      /* a live ring with a writer */
    uint16_t content_type;
    uint8_t schema_hash[32];
    uint64_t descriptor_capacity;  /* of the ring (a recording's: the ring it came from) */
    uint64_t payload_buf_size;
    const char* path;              /* the file it resolved to; valid while open */
    int member_ids;                /* events and gaps carry member ids: a ring set or a recording of one */
    uint32_t members;              /* a ring set: the members read now; 0 otherwise */
    int registered;                /* listed in the ring's reader registry (evring readers); a ring
                                      set's reader: in its members' */
} evring_source_info;

int evring_source_get_info(const evring_source* source, evring_source_info* info);

typedef enum evring_step {
    EVRING_STEP_EVENT = 0,
    EVRING_STEP_GAP = 1,
    EVRING_STEP_NOTICE = 2,
    EVRING_STEP_NOT_READY = 3,
    EVRING_STEP_END = 4,
    EVRING_STEP_FAILED = 5
} evring_step;

typedef enum evring_payload_state {
    EVRING_PAYLOAD_NOT_READ = 0,
    EVRING_PAYLOAD_OK = 1,
    EVRING_PAYLOAD_EXPIRED = 2,
    EVRING_PAYLOAD_INVALID = 3
} evring_payload_state;

/* Gap reasons: the values of event_source.hpp (and of the recording format). */
typedef enum evring_gap_reason {
    EVRING_GAP_UNRECORDED = 0,
    EVRING_GAP_FELL_BEHIND = 1,
    EVRING_GAP_ABANDONED = 2,
    EVRING_GAP_NEVER_COMMITTED = 3,
    EVRING_GAP_WRITER_GONE = 4,
    EVRING_GAP_LOST_TO_DAMAGE = 5,
    EVRING_GAP_RING_REPLACED = 6
} evring_gap_reason;

/* "the reader fell behind the writer (lapped)", ... */
const char* evring_gap_reason_text(uint32_t reason);

typedef struct evring_item {
    uint32_t struct_size;     /* sizeof(evring_item) */
    uint32_t member;          /* EVENT, GAP: the ring set member (its sequence numbers); 0 otherwise */
    evring_descriptor event;  /* EVENT */
    int payload_state;        /* EVENT: an evring_payload_state */
    const void* payload;      /* EVENT with EVRING_READ_PAYLOAD and state OK */
    size_t payload_size;
    uint64_t gap_first_seqno; /* GAP */
    uint64_t gap_count;
    uint32_t gap_reason;      /* an evring_gap_reason */
    const char* text;         /* NOTICE: the notice; GAP: the source's detail or "" */
} evring_item;

#define EVRING_READ_DESCRIPTOR 0
#define EVRING_READ_PAYLOAD 1 /* copy the payload; item.payload until the next call */

/* The next item (event_source.hpp's contract); an evring_step. FAILED: see
 * evring_source_error. */
int evring_source_next(evring_source* source, evring_item* item, int flags);

/* From now on evring_source_next hands out only the events this filter
 * expression keeps (where.hpp, docs/cli.md "Filter expressions":
 * "type == TXN_LOG && topics[0] ^= 0xddf252ad"), compiled against the
 * source's schema; NULL or "" removes it. A span name compares by label as
 * in the CLI ("block == 15000009"): the label is looked up in a second
 * source opened at the same location, so the reader does not move. A bad
 * expression, or a label no event carries, is refused (EVRING_E_INVALID,
 * evring_source_error says where and why) and the previous filter stays.
 * While a filter is set, evring_source_next_batch refuses. */
int evring_source_set_where(evring_source* source, const char* expression);

typedef struct evring_batch {
    uint32_t struct_size;  /* sizeof(evring_batch) */
    size_t events;     /* descriptors written to the front of the array */
    uint64_t gaps;     /* gaps passed over while filling */
    uint64_t skipped;  /* sequence numbers in them */
    int stopped;       /* an evring_step: EVENT when the array is full */
} evring_batch;

/* Up to `capacity` descriptors into `out`, passing over gaps (counted).
 * Returns EVRING_OK, or EVRING_E_FAILED when the source failed. */
int evring_source_next_batch(evring_source* source, evring_descriptor* out, size_t capacity,
                             evring_batch* batch);
/* The same with each event's member (the member column): members[i] for
 * out[i]; all 0 unless evring_source_info.member_ids. A ring set is merged
 * event by event, so its batches cost about what evring_source_next does. */
int evring_source_next_batch_members(evring_source* source, evring_descriptor* out, uint32_t* members,
                                     size_t capacity, evring_batch* batch);

/* Positions the source: "oldest", "latest", a sequence number, "-N" (N back
 * from the newest), a time (position.hpp: "@1700000000", "-5s",
 * "2026-11-22T01:45:00Z"), or a span position through the source's schema
 * ("block:15000009", "block:latest", "block.finalized:N"; span_seek.hpp). A
 * start that had to move leaves a note in evring_source_notice. */
int evring_source_seek(evring_source* source, const char* position);
int evring_source_seek_seqno(evring_source* source, uint64_t seqno);
/* To the newest event (handed out next, then the events after it), and to
 * the oldest one still held: evring_source_seek's "latest" and "oldest". */
int evring_source_seek_latest(evring_source* source);
int evring_source_seek_oldest(evring_source* source);
/* The names before 0.1.0's: deprecated, removed in the release after it. */
EVRING_DEPRECATED("use evring_source_seek_latest") int evring_source_reset(evring_source* source);
EVRING_DEPRECATED("use evring_source_seek_oldest") int evring_source_oldest(evring_source* source);
/* The note the last seek left ("" when none). */
const char* evring_source_notice(const evring_source* source);
/* The sequence number the next event should have (0 when not known). */
uint64_t evring_source_next_seqno(const evring_source* source);

/* Since 0.2.0: healing (docs/healing.md). From now on, when this reader of a
 * live ring or ring set falls behind the writer (lapped), it reads the events
 * it missed from a recording of the same ring instance, then goes on in the
 * ring: no gap, no duplicate; what the recording lacks stays a gap.
 * `heal_from`: the recording (`evring record`'s output); NULL with find = 1:
 * a running `evring record` of the ring, found in its reader registry.
 * `wait_ns`: how long a recording that has not caught up is waited for,
 * without progress (0: 3 s). evring_counters.healed counts what came from it.
 * A registered reader keeps its registry slot, which now says it heals.
 * Returns EVRING_OK, or EVRING_E_INVALID for any other source, or with
 * neither a recording nor find (evring_source_error says why). A function,
 * not open options, so evring_open_options keeps its 0.1.0 size. */
int evring_source_heal(evring_source* source, const char* heal_from, int find, uint64_t wait_ns);

/* Since 0.2.0: named readers (docs/named-readers.md; docs/c-api.md, "Named
 * readers"). A durable position by name, resumed by the next run, committed
 * by the application, like a Kafka consumer's commit:
 *
 *     evring_source_resume_named(src, "billing", "oldest", 0);  // before the first read
 *     while (evring_source_next(src, &item, EVRING_READ_PAYLOAD) ...) {
 *         process(&item);                        // ... and then, when processed:
 *         evring_source_commit(src);             // the last event handed out is consumed
 *     }
 *
 * evring_source_resume_named: call it before the first event is read. It
 * takes the name's lock (a second process with the name is refused while
 * the first runs; the lock goes with the handle or the process) and
 * positions the source through the CLI's one position resolver: after the
 * committed event when the position is of this ring instance; at the oldest
 * event of a new instance at the same path; at `start` ("oldest", "latest",
 * a seqno, a time, as evring_source_seek; NULL: "oldest") on the first run
 * or with EVRING_NAMED_RESET (which forgets the position). A name saved for
 * another ring is refused. What the resume says (where it resumes, how an
 * old instance ended, which events the previous run was handed after its
 * commit and so come again) is handed out as EVRING_STEP_NOTICE items before
 * the first event, and kept in evring_named_info.notices. Names: 1 to 64
 * letters, digits, '_', '-', '.', not starting with '.'. Positions live in
 * $EVRING_STATE_DIR (else $XDG_STATE_HOME/evring/readers, else
 * ~/.local/state/evring/readers); a damaged or forged position file is
 * refused (EVRING_E_FORMAT when damaged, EVRING_E_SYSTEM when it is not
 * private to this user) with its path and why.
 * Ring and snapshot sources, ring sets (a position per member), recordings,
 * and nats:// streams (a JetStream durable consumer keeps the position).
 *
 * "Handed": evring_source_next hands out the event it returns;
 * evring_source_next_batch(_members) hands out every event of the batch it
 * returns. evring_source_commit makes the last event handed out the
 * committed position (atomic: a temporary file, fsync, rename), so commit
 * after processing it (and, for a batch, the whole batch). After a SIGKILL
 * the next run resumes after the last commit and gets again at most what was
 * handed out after it; evring_named_info.redelivered counts those. */
#define EVRING_NAMED_RESET 1
int evring_source_resume_named(evring_source* source, const char* name, const char* start, int flags);
int evring_source_commit(evring_source* source);

typedef struct evring_named_info {
    uint32_t struct_size;        /* sizeof(evring_named_info) */
    const char* name;            /* valid while the source is open */
    const char* file;            /* the position file */
    uint64_t committed_seqno;    /* the last committed event; 0: none yet */
    uint64_t handed_seqno;       /* the last event handed out (the next commit); 0: none */
    /* Events this run handed out again that the previous run had been
     * handed after its last commit (seqnos redelivery_first..last; first >
     * last when nothing is known to come again). */
    uint64_t redelivered;
    uint64_t redelivery_first;
    uint64_t redelivery_last;
    const char* notices;         /* what the resume said, one notice a line */
} evring_named_info;

/* EVRING_E_INVALID when the source is not a named reader. */
int evring_source_get_named_info(const evring_source* source, evring_named_info* info);

/* Sleeps until something may be ready (the ring's doorbell), at most
 * `timeout_nanos`. Returns at once for sources that cannot block. */
void evring_source_wait(evring_source* source, uint64_t timeout_nanos);

/* ---- Event loops: a descriptor, and one wait over many sources
 * (docs/event-loops.md; the C++ API's wait_set.hpp).
 *
 *     int fd = evring_source_fd(src);             // register it with epoll, poll, select, ...
 *     ... the loop says fd is readable:
 *     while ((step = evring_source_next(src, &item, 0)) != EVRING_STEP_NOT_READY) { ... }
 *
 * evring_source_fd: the handle's descriptor (the same one every call), or a
 * negative evring_status (evring_source_error says why). It is readable from
 * the moment evring_source_next may have something other than
 * EVRING_STEP_NOT_READY to give (a commit on the ring, the writer exiting, a
 * stream's message, a notice) until evring_source_next returns
 * EVRING_STEP_NOT_READY (or evring_source_next_batch stops there); an ended
 * source stays readable. Use it only to be woken: never read, write or
 * close it. It is closed with the handle, which takes it out of any epoll
 * set. The first call starts the handle's waiting thread, which sleeps on
 * the ring's doorbell: writers pay nothing new, and an idle handle costs no
 * CPU but a look every 100 ms at whether the writer still lives. */
int evring_source_fd(evring_source* source);

/* A wait set: one wait over many sources (rings, ring sets, streams,
 * recordings), which says which of them are ready (evring_source_next has
 * something other than EVRING_STEP_NOT_READY), and one descriptor for them
 * all. Sources are not owned: a source closed while in wait sets leaves
 * them, and a wait set may be closed before its sources. A wait set and its
 * sources are used by one thread at a time. */
typedef struct evring_waitset evring_waitset;
/* NULL when out of memory (evring_last_error). */
evring_waitset* evring_waitset_create(void);
void evring_waitset_close(evring_waitset* set);
/* EVRING_E_INVALID when `source` is in the set already. */
int evring_waitset_add(evring_waitset* set, evring_source* source);
/* EVRING_E_INVALID when it is not in the set. */
int evring_waitset_remove(evring_waitset* set, evring_source* source);
/* Looks at every source, sleeping up to `timeout_nanos` (0: only looks;
 * UINT64_MAX: no limit) until one is ready. Writes the ready ones to
 * ready[0..capacity), in the order they were added, and returns how many
 * were ready (more than `capacity` when they did not all fit: a later call
 * lists the rest once the first are read to EVRING_STEP_NOT_READY), 0 when
 * none was in time, or a negative evring_status. A
 * source stays ready until read to EVRING_STEP_NOT_READY; an ended one
 * always is: remove it. */
int evring_waitset_wait(evring_waitset* set, uint64_t timeout_nanos, evring_source** ready, size_t capacity);
/* The set's descriptor: readable from the moment a source may have become
 * ready until an evring_waitset_wait finds none ready (which also arms it
 * again: call it once the loop says the descriptor is readable, with timeout
 * 0). As evring_source_fd's, owned by the set; a negative status on failure. */
int evring_waitset_fd(evring_waitset* set);
/* The message of the set's last failure. */
const char* evring_waitset_error(const evring_waitset* set);

typedef struct evring_counters {
    uint32_t struct_size;      /* sizeof(evring_counters) */
    uint64_t events;
    uint64_t lost;             /* lapped: equals the C++ Iterator::total_lost() */
    uint64_t gaps;             /* how many lapped gaps */
    uint64_t abandoned;
    uint64_t never_committed;
    uint64_t damaged;
    uint64_t replaced;
    uint64_t damage_reports;
    uint64_t records_lost_to_damage; /* known lost in damaged recordings (a lower bound) */
    uint64_t foreign;          /* input passed over that is not evring's (streams) */
    uint64_t late_events;      /* a ring set: events older than one already handed out */
    /* Since 0.2.0, after late_events: events read from a recording in place of a lapped gap
     * (evring_open_options.heal, heal_from); included in `events`, not in `lost`. */
    uint64_t healed;
} evring_counters;

/* The counters of everything read (a ring set: all members summed). */
int evring_source_get_counters(const evring_source* source, evring_counters* counters);

/* ---- Payloads of ring and snapshot sources (zero-copy) ------------------ */

/* The payload bytes in place, or NULL (out of bounds, or not a ring source).
 * Read them, then check evring_source_payload_valid. */
const void* evring_source_payload_peek(const evring_source* source, const evring_descriptor* event);
/* 1 while the payload has not been overwritten; 0 otherwise. */
int evring_source_payload_valid(const evring_source* source, const evring_descriptor* event);
/* Copies the payload: EVRING_OK, EVRING_E_EXPIRED, EVRING_E_TOO_SMALL (the
 * destination), EVRING_E_INVALID (the size cannot fit the ring) or
 * EVRING_E_UNSUPPORTED (a recording: payloads come with evring_source_next). */
int evring_source_payload_copy(const evring_source* source, const evring_descriptor* event, void* dst,
                               size_t dst_size);

/* ---- Schemas ------------------------------------------------------------ */

/* The schema as one JSON object (schema_render.hpp's schema_to_json) into
 * `out` with its NUL; EVRING_E_TOO_SMALL sets *needed (NUL included).
 * EVRING_E_NO_SCHEMA when the source has none. */
int evring_source_schema_json(evring_source* source, char* out, size_t out_size, size_t* needed);
/* Where the schema came from: "embedded", "recording", "built-in schema monad-exec-v1",
 * a file path; "" when there is none. */
const char* evring_source_schema_origin(const evring_source* source);
/* The event type's name, or NULL when the schema has no such type (or no schema). */
const char* evring_source_type_name(const evring_source* source, uint16_t event_type);
/* The payload's fields as one JSON object, NUL-terminated, into `out`.
 * EVRING_E_DECODE: evring_source_error gives the reason ("size mismatch:
 * ..."); EVRING_E_TOO_SMALL: *needed. The object is at most about
 * max(1 MiB, 8 x payload_size) bytes: past that it ends with
 * "(truncated)":true (schema_render.hpp, "Bounded output"). */
int evring_source_decode_json(evring_source* source, uint16_t event_type, const void* payload,
                              size_t payload_size, char* out, size_t out_size, size_t* needed);

/* ---- Recording: what a source hands out, into a recording file ---------- */

/* Since 0.2.0. evring_source_record writes what the source would hand out
 * into a new recording file (docs/recording-format.md), as `evring record`
 * does, through the same pipeline:
 *
 *     evring_source* src = evring_source_open("feed", NULL);   // a live ring: its newest event
 *     evring_record_options o;
 *     evring_record_options_init(&o);
 *     o.count = 1000;
 *     evring_record_result r = {.struct_size = sizeof r};
 *     if (evring_source_record(src, "feed.evrec", &o, &r) != EVRING_OK) fail(evring_source_error(src));
 *
 * - It starts where the source stands (seek or resume a name first to start
 *   elsewhere) and takes what evring_source_next would have handed out: the
 *   where filter applies, every sequence number not captured (lapped,
 *   abandoned) becomes a gap marker with its reason, and the recording gets
 *   the source's schema and span index. The source reads on from where the
 *   recording ended.
 * - It blocks until `count` events are recorded, the `until` position is
 *   passed, a snapshot, recording or stream ends, or *stop becomes nonzero
 *   (looked at about every 50 ms: set it from a signal handler or with an
 *   atomic store from another thread), then writes the end record.
 * - A registered reader stays listed, with its position, as it records. A
 *   named reader (evring_source_resume_named) commits only what is written
 *   and synced to disk, about once a second and at the end.
 * - The output must not exist. When writing fails part way (a full disk),
 *   the result says what was taken, every block written before stays
 *   readable, and the status is the failure's. */
typedef struct evring_record_options {
    uint32_t struct_size;      /* sizeof(evring_record_options): set by _init */
    uint64_t count;            /* events to record; 0 (default): no limit */
    const char* until;         /* a stop position as the CLI's --until (a seqno, a
                                  time, "block:N"); NULL (default): none */
    int compress;              /* 1 (default): zstd; 0: records as they are */
    int level;                 /* zstd's level, 1 (default) to 19 */
    uint64_t rotate_bytes;     /* go on in FILE.1, FILE.2, ... past this size; 0 (default): never */
    const volatile int* stop;  /* nonzero ends the recording; NULL (default): none */
    unsigned threads;          /* threads that compress, 1 (default) to 64 */
} evring_record_options;

void evring_record_options_init(evring_record_options* options);

/* How a recording ended (evring_record_result.ended). */
enum {
    EVRING_RECORD_END = 0,     /* the source ended */
    EVRING_RECORD_COUNT = 1,   /* `count` events were recorded */
    EVRING_RECORD_UNTIL = 2,   /* the `until` position was passed */
    EVRING_RECORD_STOPPED = 3, /* *stop became nonzero */
    EVRING_RECORD_FAILED = 4   /* writing failed (the status says why) */
};

typedef struct evring_record_result {
    uint32_t struct_size;      /* set by the caller: sizeof(evring_record_result) */
    int ended;                 /* EVRING_RECORD_* */
    uint64_t events;           /* recorded, with their payloads unless expired */
    uint64_t expired;          /* of those, overwritten while copied: recorded without */
    uint64_t lost;             /* sequence numbers not captured, in `gaps` gap markers */
    uint64_t gaps;
    uint32_t files;            /* files written (rotation) */
} evring_record_result;

/* EVRING_OK, or the failure (evring_source_error says why; EVRING_E_INVALID
 * for bad options, EVRING_E_SYSTEM with errno EEXIST for an output that
 * exists). `result` may be NULL; when given it is filled also after writing
 * failed part way. */
int evring_source_record(evring_source* source, const char* output, const evring_record_options* options,
                         evring_record_result* result);

/* ---- Fields: where a payload field is, through the schema --------------- */

/* A schema (the source's, or the one a writer was created with) says where
 * each payload field lies and what it holds, so a binding reads and writes
 * fields by name without generated code (the Rust crate does: docs/rust.md):
 *
 *     const evring_schema* schema = evring_source_schema(src);   // NULL: no schema
 *     evring_event_type_info t = {.struct_size = sizeof t};
 *     evring_field f = {.struct_size = sizeof f};
 *     if (evring_schema_event_by_name(schema, "TXN_HEADER_START", &t) == EVRING_OK &&
 *         evring_schema_field(schema, t.number, "txn_header.gas_limit", &f) == EVRING_OK &&
 *         f.kind == EVRING_FIELD_SCALAR && f.scalar == EVRING_SCALAR_U64 && item.payload_size >= t.fixed_size)
 *         memcpy(&gas_limit, (const char*)item.payload + f.offset, 8);
 *
 * Paths are written as in filter expressions: names through nested structs
 * and `[I]` into arrays ("txn_header.gas_limit", "levels[2].price",
 * "topics[0]"); the first step may name a trailing (variable-length) array.
 * A schema handle is borrowed: valid while its source or writer is open, and
 * usable from any thread. These calls read only the schema (never a payload)
 * and, having no handle of their own to keep a message in, leave the reason
 * of a failure (EVRING_E_INVALID) in this thread's evring_last_error:
 * "schema 'orders' has no event type 'ORDER_NEU' (its types: ...)". */
typedef struct evring_schema evring_schema;
typedef struct evring_writer evring_writer;  /* (the writer of "Writers" below) */

/* The source's schema (the one evring_source_schema_json gives), or NULL when
 * it has none; the schema a writer was created with, or NULL. */
const evring_schema* evring_source_schema(const evring_source* source);
const evring_schema* evring_writer_schema(const evring_writer* writer);

typedef struct evring_event_type_info {
    uint32_t struct_size;      /* sizeof(evring_event_type_info) */
    uint16_t number;
    uint32_t fixed_size;       /* of the payload's fixed part; 0 for an empty payload */
    uint32_t trailing_arrays;  /* how many variable-length arrays follow it */
    const char* name;          /* valid while the schema is */
} evring_event_type_info;

int evring_schema_event_by_name(const evring_schema* schema, const char* name, evring_event_type_info* info);
int evring_schema_event_by_number(const evring_schema* schema, uint16_t number, evring_event_type_info* info);

/* What a field holds: the schema language's kinds (docs/schema.md), plus a
 * trailing array named whole. */
typedef enum evring_field_kind {
    EVRING_FIELD_SCALAR = 0,   /* an integer, float or bool: `scalar` says which */
    EVRING_FIELD_BYTES = 1,    /* bytesN, address: `count` bytes */
    EVRING_FIELD_ENUM = 2,     /* an integer of `scalar`'s type with named values */
    EVRING_FIELD_STRUCT = 3,
    EVRING_FIELD_ARRAY = 4,    /* `count` elements of `element_size` bytes */
    EVRING_FIELD_STRING = 5,   /* char[N]: `count` bytes of NUL-padded text */
    EVRING_FIELD_TRAILING = 6  /* a trailing array: its count field and element size below */
} evring_field_kind;

/* The primitives, little-endian; U128 is 16 bytes aligned to 16, U256 four
 * 64-bit limbs, least significant first. */
typedef enum evring_scalar {
    EVRING_SCALAR_U8 = 0, EVRING_SCALAR_U16 = 1, EVRING_SCALAR_U32 = 2, EVRING_SCALAR_U64 = 3,
    EVRING_SCALAR_I8 = 4, EVRING_SCALAR_I16 = 5, EVRING_SCALAR_I32 = 6, EVRING_SCALAR_I64 = 7,
    EVRING_SCALAR_F32 = 8, EVRING_SCALAR_F64 = 9, EVRING_SCALAR_BOOL = 10,
    EVRING_SCALAR_U128 = 11, EVRING_SCALAR_U256 = 12
} evring_scalar;

typedef struct evring_field {
    uint32_t struct_size;   /* sizeof(evring_field) */
    int kind;               /* an evring_field_kind */
    int scalar;             /* SCALAR, ENUM: an evring_scalar; ARRAY, TRAILING: the element's when it
                               is a scalar (or an enum's integer); else -1 */
    uint32_t offset;        /* in the fixed part; when `trailing` >= 0, inside that array's element */
    uint32_t size;          /* the field's bytes (TRAILING: 0, its length is the payload's) */
    uint32_t count;         /* BYTES, STRING: N; ARRAY: its elements; else 0 */
    uint32_t element_size;  /* ARRAY, TRAILING: one element's bytes */
    /* A path that starts in a trailing array: which one (0 the first; -1
     * none), and which element ([I]; with kind TRAILING the whole array).
     * The element lies after the fixed part and the arrays before it, each
     * as long as its count field says: fixed_size + sum(count_j x
     * element_size_j) + element_index x element_size (evring_schema_trailing
     * describes the arrays before it). */
    int32_t trailing;
    uint64_t element_index;
    uint32_t count_offset;  /* trailing >= 0: that array's count field in the fixed part, */
    uint32_t count_size;    /* its width (1, 2, 4 or 8 bytes), */
    uint32_t trailing_element_size;  /* and the size of the array's elements */
    char type_name[64];     /* as schema files write it: "u64", "bytes32", "side", "u16[3]" (cut to fit) */
} evring_field;

/* The field at `path` in event type `event_type`'s payload. EVRING_E_INVALID
 * when the type is unknown, the path is malformed, or the type has no such
 * field (an index past a fixed array's end included; the message lists the
 * type's fields). */
int evring_schema_field(const evring_schema* schema, uint16_t event_type, const char* path, evring_field* field);
/* Trailing array `index` (0 the first) of event type `event_type`, as
 * evring_schema_field describes it named whole (kind TRAILING). */
int evring_schema_trailing(const evring_schema* schema, uint16_t event_type, uint32_t index, evring_field* field);

/* ---- Writers ------------------------------------------------------------ */

typedef struct evring_writer evring_writer;

typedef struct evring_writer_options {
    uint32_t struct_size;       /* sizeof(evring_writer_options): set by _init */
    const char* name;           /* a ring name (in the ring directory) or a path */
    unsigned descriptor_shift;  /* 2^shift descriptors; default 20 */
    unsigned payload_shift;     /* 2^shift payload bytes; default 28 */
    uint16_t content_type;      /* default 1 (Test); with a schema: the schema's */
    const char* schema_path;    /* a schema file to embed (its hash goes in the header), or NULL */
    const char* schema_text;    /* the same as text, or NULL */
    int shared;                 /* join a ring other writers share; default 0 (exclusive) */
    int keep;                   /* leave the file when the writer closes; default 0 */
    uint32_t file_mode;         /* default 0664 */
    int check_raw;              /* with a schema: check raw commits too (below); default 0 */
} evring_writer_options;

void evring_writer_options_init(evring_writer_options* options);

/* Creates (or, shared, joins) a ring. NULL on failure: evring_last_error. */
evring_writer* evring_writer_create(const evring_writer_options* options);
/* Removes the ring file unless `keep` (shared: the last writer removes it). */
void evring_writer_close(evring_writer* writer);
/* The message of the calling thread's last failure on this writer ("" when
 * it had none): other threads' failures do not replace it. */
const char* evring_writer_error(const evring_writer* writer);
const char* evring_writer_path(const evring_writer* writer);
/* The largest payload one event may carry. */
uint64_t evring_writer_max_payload(const evring_writer* writer);

#define EVRING_RESERVATION_PRIVATE_SIZE 192

/* A reserved event: fill payload, event_type and content_ext, then commit or
 * abort it exactly once.
 *
 * Reserve/commit is the raw path: the commit is not checked against the
 * schema, unless the writer was created with check_raw (a debugging aid; it
 * costs one check_payload per event). A checked commit that the schema rules
 * out records a RECORD_ERROR in the event's place and returns EVRING_E_DECODE
 * with the reason in evring_writer_error. */
typedef struct evring_reservation {
    uint32_t struct_size;   /* sizeof(evring_reservation) */
    void* payload;          /* out: payload_size writable bytes, 16-byte aligned */
    uint64_t seqno;         /* out */
    uint64_t payload_size;  /* out */
    uint16_t event_type;    /* in */
    uint64_t content_ext[4];/* in: the flow tags */
    EVRING_ALIGNAS(64) unsigned char private_[EVRING_RESERVATION_PRIVATE_SIZE];
} evring_reservation;

/* EVRING_E_TOO_LARGE when the payload is larger than the ring allows
 * (nothing is reserved). */
int evring_writer_reserve(evring_writer* writer, uint64_t payload_size, evring_reservation* reservation);
int evring_writer_commit(evring_writer* writer, evring_reservation* reservation);
/* Publishes a RECORD_ERROR in the reservation's place (Publisher::abort). */
int evring_writer_abort(evring_writer* writer, evring_reservation* reservation);
/* Reserve, copy, commit in one call; `flow` may be NULL. A payload too
 * large records a RECORD_ERROR instead and returns EVRING_E_TOO_LARGE.
 * *seqno (may be NULL) receives the event's sequence number.
 * With a schema this is the typed, checked write: an event type the schema
 * does not declare, or a payload whose size its layout rules out (the fixed
 * part plus each trailing array's count x element size), is refused with
 * EVRING_E_DECODE, nothing is published, and evring_writer_error says why:
 * "QUOTE (event type 2): a payload of 5 bytes, but its layout is exactly 48 bytes".
 * A checked event that no registered reader wants (its type's keywords and
 * level, docs/interest.md; never an always_recorded type) is then skipped:
 * EVRING_NOT_WANTED (positive, not an error), nothing published, *seqno 0.
 * Without a schema it publishes any bytes. */
int evring_writer_record(evring_writer* writer, uint16_t event_type, const void* payload, uint64_t payload_size,
                         const uint64_t flow[4], uint64_t* seqno);

/* One event of evring_writer_record_batch: what evring_writer_record takes. */
typedef struct evring_batch_event {
    uint32_t struct_size;      /* sizeof(evring_batch_event), the same in every element */
    uint16_t event_type;
    const void* payload;       /* payload_size bytes; may be NULL when 0 */
    uint64_t payload_size;
    uint64_t content_ext[4];   /* the flow tags */
} evring_batch_event;

/* Records events[0..count) in order, as evring_writer_record would one by
 * one, in batches of up to 64 events that share one timestamp, one
 * reservation and one doorbell check (docs/format.md, "Batches"). The array's
 * element size is events[0].struct_size, and every element must say the same.
 * seqnos (may be NULL) receives `count` sequence numbers, 0 for an event not
 * published. With a schema every event is checked first: if any is refused,
 * nothing is published and EVRING_E_DECODE names the first refused event's
 * index and why; events no registered reader wants are then skipped (seqno
 * 0). An event too large is recorded as a RECORD_ERROR in its place, the
 * others are published, and EVRING_E_TOO_LARGE names the first. */
int evring_writer_record_batch(evring_writer* writer, const evring_batch_event* events, size_t count,
                               uint64_t* seqnos);

/* Interest (docs/interest.md): 1 when some registered reader of the ring
 * wants events of `event_type` by its schema's keywords and level (or the
 * type is always_recorded, or no reader narrowed what it wants), 0 when
 * nobody does: skip building the event. One load of the ring's interest
 * word. 1 for a writer without a schema and for a type its schema does not
 * declare (evring_writer_record refuses those); 0 for a NULL writer.
 *
 *     if (evring_writer_wants(w, QUOTE)) { build(&quote); evring_writer_record(w, QUOTE, &quote, sizeof quote, NULL, NULL); }
 */
int evring_writer_wants(const evring_writer* writer, uint16_t event_type);

/* ---- Assembled spans: whole blocks with their commit state ------------- */

/* An assembler reads a source through the span assembler the CLI's `watch
 * --assemble` and Python's reader.blocks() use (docs/c-api.md, "Assembled
 * spans"): each whole instance of a span of the source's schema (a Monad
 * block with its transactions), with the stages it reached (ended,
 * finalized, verified), rival blocks the chain did not take as Abandoned,
 * and a block with a gap inside as Broken, naming the lost seqnos, never as
 * a shorter block:
 *
 *     evring_source_seek(src, "oldest");
 *     evring_assembler* a = evring_assembler_open(src, "block", "finalized");  // "" or NULL: when ended
 *     if (a == NULL) fail(evring_last_error());
 *     evring_span b = {.struct_size = sizeof b};
 *     for (int step; (step = evring_assembler_next(a, &b, NULL)) != EVRING_STEP_END;) {
 *         if (step == EVRING_STEP_EVENT) printf("block %llu: %zu txns\n", (unsigned long long)b.label, b.nested_count);
 *         else if (step == EVRING_STEP_NOT_READY) evring_source_wait(src, 100000000);
 *         else if (step == EVRING_STEP_FAILED) fail(evring_assembler_error(a));
 *     }
 *     evring_assembler_close(a);
 *
 * The assembler reads its source from where it stands (seek it first: to
 * "oldest", or "block:N"); while it is open, read the source only through it
 * (events read past it are missing from its spans), and close it before the
 * source. Instances begun before the first event read are counted, not
 * handed out. A source with a where filter is refused. Thread safety: as its
 * source (one thread at a time). */
typedef struct evring_assembler evring_assembler;

typedef enum evring_span_state {
    EVRING_SPAN_COMPLETE = 0,   /* every event, and the stage asked for */
    EVRING_SPAN_ABANDONED = 1,  /* a rival: a stage marked another instance of the same label */
    EVRING_SPAN_BROKEN = 2      /* events inside it were lost: lost_first, lost_count */
} evring_span_state;

/* The arrays an evring_span points to hold these. Their layout is fixed:
 * they never grow (what more an element needs would come as a new array of
 * evring_span), so a caller indexes them with its own sizeof. */
typedef struct evring_span_event {
    evring_descriptor event;
    uint32_t member;          /* the ring set member; 0 otherwise */
    int payload_state;        /* an evring_payload_state */
    const void* payload;      /* state OK: payload_size bytes; else NULL */
    size_t payload_size;
} evring_span_event;

typedef struct evring_span_stage {
    const char* name;         /* "ended", then the schema's stages in order reached ("finalized") */
    uint64_t seqno;           /* of the event that marked it */
    uint64_t nanos;           /* its record time */
} evring_span_stage;

typedef struct evring_span_nested {
    const char* span;         /* the nested span's name ("txn") */
    uint64_t key;             /* its flow tag's value (a transaction's `txn` tag) */
    const size_t* events;     /* indices into evring_span.events */
    size_t event_count;
} evring_span_nested;

typedef struct evring_span {
    uint32_t struct_size;     /* sizeof(evring_span) */
    int state;                /* an evring_span_state */
    const char* span;         /* the span's name ("block") */
    uint64_t label;           /* the block number */
    const uint8_t* id;        /* the begin event's id (a block's 32-byte id); NULL, 0 when the span has none */
    size_t id_size;
    uint32_t member;          /* the ring set member it came from */
    const evring_span_event* events;  /* in the order read: the begin event first */
    size_t event_count;
    const evring_span_nested* nested; /* in the order their first events came */
    size_t nested_count;
    const size_t* outside;    /* indices of events in no nested instance (begin and end among them) */
    size_t outside_count;
    const evring_span_stage* stages;  /* in the order reached */
    size_t stage_count;
    uint64_t lost_first;      /* BROKEN: the seqnos lost inside it; 0, 0 otherwise */
    uint64_t lost_count;
    const char* reassembly_error;  /* BROKEN: "seqno 41700..41703 lost"; "" otherwise */
} evring_span;

/* An assembler of `span`'s instances ("block"), handed out once they reach
 * `stage` (NULL or "": when they end; "ended", or one of the span's stages:
 * "finalized", "verified"), reading `source`. NULL on failure, with the
 * reason in evring_last_error: a source without a schema, a span the schema
 * has no label for ("no span 'txn' with a label in schema ... (spans with
 * labels: block)"), a stage it lacks ("span 'block' has no stage 'final'
 * (its stages: ended, finalized, verified)"), a where filter set. */
evring_assembler* evring_assembler_open(evring_source* source, const char* span, const char* stage);
void evring_assembler_close(evring_assembler* assembler);

/* Reads the source until one instance is ready and returns an evring_step:
 * - EVENT: *span holds it; its pointers stay valid until the next call on
 *   the assembler (or its close).
 * - GAP, NOTICE: the source's, as evring_source_next hands them out, into
 *   *item when `item` is not NULL (with NULL they are passed over). A gap
 *   has already broken the instances open across it: they come next, BROKEN.
 * - NOT_READY: nothing more to read now (a live ring): wait
 *   (evring_source_wait) and call again; open instances stay open.
 * - END: the source ended; instances still open, or still waiting for the
 *   stage, are counted as unfinished (evring_assembler_get_counts), not
 *   handed out. END again on every later call.
 * - FAILED: evring_assembler_error says why (the source failed, a struct
 *   too small, a where filter set since the open). */
int evring_assembler_next(evring_assembler* assembler, evring_span* span, evring_item* item);
/* The message of the assembler's last failure ("" when none). */
const char* evring_assembler_error(const evring_assembler* assembler);

typedef struct evring_assembler_counts {
    uint32_t struct_size;     /* sizeof(evring_assembler_counts) */
    uint64_t handed_out;      /* complete instances handed out */
    uint64_t abandoned;       /* abandoned ones handed out */
    uint64_t broken;          /* broken ones handed out */
    uint64_t unfinished;      /* open or waiting for the stage at the end, or pushed out by newer ones */
    uint64_t unassembled;     /* events of instances begun before reading started */
} evring_assembler_counts;

int evring_assembler_get_counts(const evring_assembler* assembler, evring_assembler_counts* counts);

#ifdef __cplusplus
}
#endif

#endif /* EVRING_EVRING_H */
