/* A C program that writes ten typed events through the header
 * `evring schema compile --lang c` generates from tests/schemas/orders.toml
 * (every kind of field: nested structs, enums, arrays, bytes, u128, u256,
 * floats, bool, padding, trailing arrays). c_pkgconfig_test.py builds it
 * exactly as a user would, from the build tree and nothing installed:
 *
 *     evring schema compile --lang c orders.toml -o orders_schema.h
 *     PKG_CONFIG_PATH=BUILD/meson-uninstalled \
 *         cc -std=c11 c_typed_writer.c $(pkg-config --cflags --libs evring)
 *     ./a.out RING         (the ring is kept; `evring watch RING` decodes it)
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "orders_schema.h"

static int failed(const char* what, int status, evring_writer* writer) {
    fprintf(stderr, "c_typed_writer: %s: %s (%s)\n", what, evring_status_name(status),
            writer != NULL ? evring_writer_error(writer) : evring_last_error());
    return 1;
}

static orders_order_new order(uint64_t id, int64_t mantissa, orders_side side) {
    orders_order_new o;
    memset(&o, 0, sizeof o);
    o.order_id = id;
    o.price.mantissa = mantissa;
    o.price.exponent = -2;
    o.quantity = (uint32_t)(id - 1000) * 10;
    o.side = side;
    memset(o.trader, 0x11, sizeof o.trader);
    o.tags[0] = 1, o.tags[1] = 2, o.tags[2] = 3;
    return o;
}

static orders_fill fill(uint64_t id) {
    orders_fill f;
    memset(&f, 0, sizeof f);
    f.order_id = id;
    f.price.mantissa = 250;
    f.quantity = 7;
    f.is_final = true;
    f.fee_ratio = 0.5f;
    f.notional.limbs[0] = ((uint64_t)1 << 40) + 5; /* 2^64 + 2^40 + 5 */
    f.notional.limbs[1] = 1;
    f.venue_fees.limbs[0] = 1;
    return f;
}

int main(int argc, char** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: c_typed_writer RING\n");
        return 2;
    }
    evring_writer_options options;
    orders_writer_options(&options); /* the ring embeds the schema: readers decode by name */
    options.name = argv[1];
    options.descriptor_shift = 8;
    options.payload_shift = 16;
    options.keep = 1;
    evring_writer* w = evring_writer_create(&options);
    if (w == NULL) return failed(argv[1], EVRING_E_INVALID, NULL);

    const uint64_t flow[4] = {7, 1001, 0, 0}; /* ORDERS_FLOW_SYMBOL, ORDERS_FLOW_ORDER */
    const orders_order_new first = order(1001, 12345, ORDERS_SIDE_BUY);
    const orders_order_new second = order(1002, 12400, ORDERS_SIDE_SELL);
    const orders_order_new third = order(1003, 12500, ORDERS_SIDE_BUY);
    const orders_order_cancel no_funds = {.order_id = 1001, .reason = ORDERS_CANCEL_REASON_NO_FUNDS};
    const orders_order_cancel band = {.order_id = 1003, .reason = ORDERS_CANCEL_REASON_PRICE_BAND};
    const orders_fill two_legs = fill(1002);
    const orders_fill no_legs = fill(1003);
    const orders_leg legs[2] = {{.venue = 3, .quantity = 4, .rate = 0.25}, {.venue = 5, .quantity = 3, .rate = 1.5}};
    orders_book_snapshot book;
    memset(&book, 0, sizeof book);
    for (int i = 0; i < 4; ++i) {
        book.levels[i].price.mantissa = 100 + i;
        book.levels[i].price.exponent = -1;
        book.levels[i].size = 10 * (uint32_t)i;
    }
    memcpy(book.checksum, "\xde\xad\xbe\xef", 4);
    book.sequence = 99;

    int s;
    uint64_t seqno = 0, expected = 0;
#define WRITE(call)                                                          \
    do {                                                                     \
        if ((s = (call)) != EVRING_OK) return failed(#call, s, w);           \
        if (seqno != ++expected) return failed(#call, EVRING_E_INVALID, w);  \
    } while (0)
    WRITE(orders_record_order_new(w, &first, (const uint8_t*)"first", 5, flow, &seqno));
    WRITE(orders_record_order_new(w, &second, NULL, 0, flow, &seqno));
    WRITE(orders_record_order_cancel(w, &no_funds, flow, &seqno));
    WRITE(orders_record_fill(w, &two_legs, legs, 2, flow, &seqno));
    WRITE(orders_record_heartbeat(w, NULL, &seqno));
    WRITE(orders_record_book_snapshot(w, &book, NULL, &seqno));
    WRITE(orders_record_order_new(w, &third, (const uint8_t*)"x", 1, flow, &seqno));
    WRITE(orders_record_order_cancel(w, &band, flow, &seqno));
    WRITE(orders_record_fill(w, &no_legs, NULL, 0, flow, &seqno));
    WRITE(orders_record_heartbeat(w, NULL, &seqno));

    /* A trailing array too long for its count field (u8 legs_count) is refused; nothing is written. */
    static orders_leg many[256];
    if ((s = orders_record_fill(w, &two_legs, many, 256, flow, &seqno)) != EVRING_E_INVALID || seqno != 0)
        return failed("a fill of 256 legs", s, w);
    printf("wrote %" PRIu64 " events to %s\n", expected, evring_writer_path(w));
    evring_writer_close(w);
    return 0;
}
