"""How the sync and async clients share their behaviour: each behaviour is a plan, a generator that
decides and never does I/O. A plan yields steps (a request to send, a pause, a poll ...) and is sent
back what each step gave; it returns the behaviour's result or raises its error. A client only
performs the steps, blocking (:func:`drive`) or awaiting (:func:`drive_async`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Awaitable, Callable, Generator, TypeVar

S = TypeVar("S")
O = TypeVar("O")
R = TypeVar("R")


@dataclass(frozen=True)
class Wait:
    """A pause in a plan: sleep this many seconds, then go on."""

    seconds: float


def drive(plan: Generator[S, O, R], perform: Callable[[S], O]) -> R:
    """Runs ``plan`` to its end, performing each step with ``perform`` (which blocks)."""
    step = next(plan)
    while True:
        given = perform(step)
        try:
            step = plan.send(given)
        except StopIteration as done:
            result: R = done.value
            return result


async def drive_async(plan: Generator[S, O, R], perform: Callable[[S], Awaitable[O]]) -> R:
    """Runs ``plan`` to its end, awaiting ``perform`` for each step."""
    step = next(plan)
    while True:
        given = await perform(step)
        try:
            step = plan.send(given)
        except StopIteration as done:
            result: R = done.value
            return result
