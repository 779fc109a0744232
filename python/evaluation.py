"""The evaluation protocol shared by training, the PyTorch evaluator and (mirrored in C++)
models/tools/slotserve_perplexity.cc, so that every number is computed on the same token stream
the same way.

A split is a list of books (token ids, no BOS; data/prepare_corpus.py writes one book per line).
Each book is cut into consecutive windows of `window` tokens (the last one shorter). A window is
scored from a fresh, empty state: the model reads BOS followed by the window's tokens but the last,
and predicts every token of the window, so every token of the split is predicted exactly once,
from at most window-1 tokens of its own book as context, at positions 0..window-1 (the training
sequence length, so no position is beyond what training saw). Perplexity is
exp(sum of -log p / number of tokens).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator, List, Optional, Tuple

import torch


def load_ids(path: Path) -> List[List[int]]:
    """One book per line, token ids separated by spaces."""
    with Path(path).open() as f:
        return [[int(t) for t in line.split()] for line in f if line.strip()]


def windows(books: List[List[int]], window: int,
            max_tokens: Optional[int] = None) -> Iterator[List[int]]:
    """The target tokens of each evaluation window, in order; with max_tokens, only the windows
    whose targets fit in the first max_tokens target tokens (at least one window)."""
    if window < 1:
        raise ValueError(f"evaluation window must be >= 1 token, got {window}")
    used = 0
    for book in books:
        for start in range(0, len(book), window):
            chunk = book[start:start + window]
            if max_tokens is not None and used > 0 and used + len(chunk) > max_tokens:
                return
            used += len(chunk)
            yield chunk


def window_inputs(chunk: List[int], bos_id: int) -> List[int]:
    """What the model reads for a window: BOS, then every target but the last."""
    return [bos_id] + chunk[:-1]


def window_batches(books: List[List[int]], window: int, bos_id: int, batch: int,
                   max_tokens: Optional[int] = None
                   ) -> Iterator[Tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """(inputs [B, T], targets [B, T], mask [B, T]) for the parallel form; short windows are
    padded at the end (padding only follows real tokens, so causal attention never sees it)."""
    pending = list(windows(books, window, max_tokens))
    for i in range(0, len(pending), batch):
        group = pending[i:i + batch]
        length = max(len(chunk) for chunk in group)
        inputs = torch.full((len(group), length), bos_id, dtype=torch.long)
        targets = torch.zeros((len(group), length), dtype=torch.long)
        mask = torch.zeros((len(group), length), dtype=torch.float32)
        for row, chunk in enumerate(group):
            n = len(chunk)
            inputs[row, :n] = torch.tensor(window_inputs(chunk, bos_id))
            targets[row, :n] = torch.tensor(chunk)
            mask[row, :n] = 1.0
        yield inputs, targets, mask
