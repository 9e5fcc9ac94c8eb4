"""asyncio for evring readers: `await reader.next()` and `async for event in
reader` (Reader.next, Reader.__anext__ call these). docs/event-loops.md.

A reader's descriptor (Reader.fileno) is readable while try_next() may have
something; the loop watches a duplicate of it, so that a reader closed while
a coroutine awaits it wakes that coroutine (the set behind the descriptor
makes it readable once when it closes) instead of leaving it waiting on a
descriptor the loop no longer sees.
"""
import asyncio
import os


async def next_event(reader):
    """The next event, waiting without blocking the loop; None once the source ended."""
    loop = asyncio.get_running_loop()
    while True:
        event = reader.try_next()
        if event is not None:
            return event
        if reader.ended:
            return None
        await _readable(loop, reader.fileno())


async def anext(reader):
    event = await next_event(reader)
    if event is None:
        raise StopAsyncIteration
    return event


async def _readable(loop, fd):
    fd = os.dup(fd)
    woken = loop.create_future()
    loop.add_reader(fd, _wake, woken)
    try:
        await woken
    finally:
        loop.remove_reader(fd)
        os.close(fd)


def _wake(woken):
    if not woken.done():
        woken.set_result(None)
