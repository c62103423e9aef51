"""Training captions drawn afresh for each image at each step, from its name, keywords and colour words.

A held-out emoji is never captioned with its full short name (that is its evaluation caption); it is
shown with its keywords and colours only. An empty caption now and then teaches the unconditional
prediction classifier-free guidance needs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class EmojiWords:
    name: str
    keywords: list[str]
    colours: list[str]
    heldout: bool


def words_of(data: dict[str, np.ndarray]) -> list[EmojiWords]:
    return [
        EmojiWords(str(name), [word for word in str(keywords).split("|") if word], [word for word in str(colours).split(",") if word], bool(heldout))
        for name, keywords, colours, heldout in zip(data["names"], data["keywords"], data["colours"], data["heldout"])
    ]


def all_texts(emoji: list[EmojiWords]) -> list[str]:
    """Every word the captions can use (the tokenizer's training text)."""
    return [text for entry in emoji for text in [entry.name, *entry.keywords, *entry.colours]]


def caption(entry: EmojiWords, rng: np.random.Generator, empty_rate: float) -> str:
    if rng.random() < empty_rate:
        return ""
    keywords = [word for word in entry.keywords if word.lower() != entry.name.lower()] if entry.heldout else entry.keywords
    colour = " and ".join(entry.colours)
    some = list(rng.permutation(keywords)[: rng.integers(1, 4)]) if keywords else []
    choices = [" ".join(some), f"{colour} {' '.join(some)}"]
    if not entry.heldout:
        choices += [entry.name, entry.name, f"{colour} {entry.name}", f"{entry.name}, {', '.join(some)}"]
    return str(choices[rng.integers(len(choices))]).strip()
