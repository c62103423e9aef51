"""A small byte-level BPE vocabulary in CLIP's format, trained on the captions' words.

The files are the Hugging Face CLIP tokenizer folder (`vocab.json`, `merges.txt`, the two configs)
that Atelier's diffusion pipeline reads (workers/clip-tokenizer/), and `encode` here gives the same
ids as that tokenizer: CLIP's clean-up, its word pattern, bytes mapped to unicode symbols, `</w>` on
a word's last symbol, merges applied lowest rank first. The vocabulary is CLIP's layout: 256 byte
symbols, the same with `</w>`, one token per merge, then `<|startoftext|>` and `<|endoftext|>`.
"""

from __future__ import annotations

import html
import json
import unicodedata
from collections import Counter
from functools import lru_cache
from pathlib import Path

START = "<|startoftext|>"
END = "<|endoftext|>"
END_OF_WORD = "</w>"
CONTRACTIONS = ("'s", "'t", "'re", "'ve", "'m", "'ll", "'d")


@lru_cache(maxsize=1)
def byte_alphabet() -> dict[int, str]:
    """CLIP's (GPT-2's) reversible map from bytes to printable unicode symbols."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    symbols = printable[:]
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            symbols.append(256 + extra)
            extra += 1
    return dict(zip(printable, (chr(symbol) for symbol in symbols)))


def clean(text: str) -> str:
    text = html.unescape(html.unescape(unicodedata.normalize("NFC", text))).strip()
    return " ".join(text.split()).lower()


def split_words(cleaned: str) -> list[str]:
    """CLIP's word pattern: contractions, runs of letters, single digits, runs of other non-space symbols."""
    words: list[str] = []
    i = 0
    kind = lambda char: "L" if unicodedata.category(char).startswith("L") else "N" if unicodedata.category(char).startswith("N") else "S" if char.isspace() else "P"  # noqa: E731
    while i < len(cleaned):
        if cleaned.startswith(START, i) or cleaned.startswith(END, i):
            token = START if cleaned.startswith(START, i) else END
            words.append(token)
            i += len(token)
            continue
        contraction = next((c for c in CONTRACTIONS if cleaned.startswith(c, i)), None)
        if contraction:
            words.append(contraction)
            i += len(contraction)
            continue
        char_kind = kind(cleaned[i])
        if char_kind == "S":
            i += 1
            continue
        if char_kind == "N":
            words.append(cleaned[i])
            i += 1
            continue
        j = i + 1
        while j < len(cleaned) and kind(cleaned[j]) == char_kind:
            if char_kind == "P" and any(cleaned.startswith(c, j) for c in CONTRACTIONS):
                break
            j += 1
        words.append(cleaned[i:j])
        i = j
    return words


def byte_symbols(word: str) -> list[str]:
    alphabet = byte_alphabet()
    symbols = [alphabet[byte] for byte in word.encode("utf-8")]
    symbols[-1] += END_OF_WORD
    return symbols


def train_merges(texts: list[str], merges: int) -> list[tuple[str, str]]:
    """Greedy BPE over the words of `texts`, most frequent pair first (ties by the pair's text)."""
    words = Counter(tuple(byte_symbols(word)) for text in texts for word in split_words(clean(text)) if word not in (START, END))
    learned: list[tuple[str, str]] = []
    vocabulary = {symbols: count for symbols, count in words.items()}
    for _ in range(merges):
        pairs: Counter[tuple[str, str]] = Counter()
        for symbols, count in vocabulary.items():
            for pair in zip(symbols, symbols[1:]):
                pairs[pair] += count
        if not pairs:
            break
        best = min(pairs, key=lambda pair: (-pairs[pair], pair))
        learned.append(best)
        joined = best[0] + best[1]
        merged: dict[tuple[str, ...], int] = {}
        for symbols, count in vocabulary.items():
            out: list[str] = []
            i = 0
            while i < len(symbols):
                if i < len(symbols) - 1 and (symbols[i], symbols[i + 1]) == best:
                    out.append(joined)
                    i += 2
                else:
                    out.append(symbols[i])
                    i += 1
            merged[tuple(out)] = merged.get(tuple(out), 0) + count
        vocabulary = merged
    return learned


class Tokenizer:
    def __init__(self, merges: list[tuple[str, str]], max_length: int):
        self.merges = merges
        self.max_length = max_length
        base = list(byte_alphabet().values())
        tokens = base + [symbol + END_OF_WORD for symbol in base] + [left + right for left, right in merges] + [START, END]
        self.ids = {token: index for index, token in enumerate(tokens)}
        self.ranks = {pair: rank for rank, pair in enumerate(merges)}
        self.start_id = self.ids[START]
        self.end_id = self.ids[END]
        self.pad_id = self.end_id
        self._cache: dict[str, list[int]] = {}

    @property
    def vocab_size(self) -> int:
        return len(self.ids)

    def _bpe(self, word: str) -> list[int]:
        if word in (START, END):
            return [self.ids[word]]
        cached = self._cache.get(word)
        if cached is not None:
            return cached
        symbols = byte_symbols(word)
        while len(symbols) > 1:
            ranked = [(self.ranks.get(pair, 1 << 30), pair) for pair in zip(symbols, symbols[1:])]
            rank, best = min(ranked)
            if rank == 1 << 30:
                break
            out: list[str] = []
            i = 0
            while i < len(symbols):
                if i < len(symbols) - 1 and (symbols[i], symbols[i + 1]) == best:
                    out.append(symbols[i] + symbols[i + 1])
                    i += 2
                else:
                    out.append(symbols[i])
                    i += 1
            symbols = out
        ids = [self.ids[symbol] for symbol in symbols]
        self._cache[word] = ids
        return ids

    def encode(self, text: str) -> list[int]:
        """`max_length` ids: start, the text's tokens (cut to fit), end, padding."""
        body = [token for word in split_words(clean(text)) for token in self._bpe(word)][: self.max_length - 2]
        ids = [self.start_id, *body, self.end_id]
        return ids + [self.pad_id] * (self.max_length - len(ids))

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "vocab.json").write_text(json.dumps(self.ids, ensure_ascii=False))
        (folder / "merges.txt").write_text("#version: 0.2\n" + "".join(f"{left} {right}\n" for left, right in self.merges))
        config = {"model_max_length": self.max_length, "pad_token": END, "bos_token": START, "eos_token": END, "unk_token": END}
        (folder / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n")
        special = {key: config[key] for key in ("pad_token", "bos_token", "eos_token", "unk_token")}
        (folder / "special_tokens_map.json").write_text(json.dumps(special, indent=2) + "\n")

    def to_state(self) -> dict[str, object]:
        return {"merges": [list(pair) for pair in self.merges], "max_length": self.max_length}

    @staticmethod
    def from_state(state: dict[str, object]) -> "Tokenizer":
        return Tokenizer([(left, right) for left, right in state["merges"]], int(state["max_length"]))  # type: ignore[union-attr, arg-type, misc]
