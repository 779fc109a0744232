"""Beam search over the PyTorch reference's recurrent decoder step: the reference the C++
engine's beam search (engine/beam_search.h, docs/ARCHITECTURE.md "Beam search") is checked against.

The rules are the engine's, for one request with n_best 1:
  - one live hypothesis to start (empty; its first input is decoder_start_id at position 0);
  - each step ranks every (hypothesis, token) pair by logprob_sum + log_softmax(row)[token],
    in float64 (ties: the earlier hypothesis in live order, then the lower token id; tokens with
    a non-finite log-probability are never picked), and keeps the best `width - finished`;
  - a kept pair whose token is eos, or whose length (eos counted) reaches max_length, finishes
    with score logprob_sum / length ** length_penalty (logprob_sum when the penalty is 0); the
    rest are the new live hypotheses, in rank order, each carrying a copy of its parent's state;
  - the search ends when nothing is live, or when a hypothesis has finished and no live one can
    still beat it (its sum only falls: its best reachable score is sum / max_length ** lp for
    lp > 0, sum / (length + 1) ** lp otherwise);
  - the answer is the finished hypothesis with the best score (the first to finish on ties),
    without its eos.
Width 1 is greedy decoding.
"""

import math
from dataclasses import dataclass, field
from typing import List, Sequence

import torch


@dataclass
class _Hypothesis:
    ids: List[int] = field(default_factory=list)
    logprob_sum: float = 0.0


def select_rows(value, index: torch.Tensor):
    """The batch rows `index` of a (nested dict / list of) tensors with the batch first."""
    if isinstance(value, torch.Tensor):
        return value.index_select(0, index)
    if isinstance(value, dict):
        return {key: select_rows(item, index) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(select_rows(item, index) for item in value)
    raise TypeError(f"cannot select batch rows of a {type(value).__name__}")


def _score(logprob_sum: float, length: int, length_penalty: float) -> float:
    if length_penalty == 0.0:
        return logprob_sum
    return logprob_sum / math.pow(length, length_penalty)


def _ranked_pairs(rows: torch.Tensor, live: Sequence[_Hypothesis], keep: int):
    """[(sum, parent, token)] of the best `keep` pairs, best first, by the engine's order."""
    pairs = []
    for parent, hypothesis in enumerate(live):
        sums = hypothesis.logprob_sum + rows[parent]
        sums = torch.where(torch.isfinite(sums), sums, -math.inf)
        # A row's own best `keep`: every token at or above the keep-th best sum (all of a tie
        # at the boundary), then by sum, the lower token first among equal sums.
        threshold = torch.topk(sums, min(keep, sums.numel())).values[-1]
        tokens = torch.nonzero((sums >= threshold) & (sums > -math.inf)).flatten()
        order = tokens[torch.argsort(-sums[tokens], stable=True)][:keep]
        pairs.extend((sums[t].item(), parent, t.item()) for t in order)
    pairs.sort(key=lambda pair: (-pair[0], pair[1], pair[2]))
    return pairs[:keep]


class _Search:
    """One source's search: its live hypotheses (best first) and those that finished."""

    def __init__(self):
        self.live = [_Hypothesis()]
        self.finished = []  # (score, ids), in finishing order

    def advance(self, rows: torch.Tensor, width: int, max_length: int, length_penalty: float,
                eos_id: int) -> List[int]:
        """One step over this search's log-softmax rows (one per live hypothesis, in order);
        returns, for each new live hypothesis, the index of its parent among the old ones."""
        children, parents = [], []
        for logprob_sum, parent, token in _ranked_pairs(rows, self.live,
                                                        width - len(self.finished)):
            ids = self.live[parent].ids + [token]
            if token == eos_id or len(ids) >= max_length:
                self.finished.append((_score(logprob_sum, len(ids), length_penalty), ids))
            else:
                children.append(_Hypothesis(ids, logprob_sum))
                parents.append(parent)
        self.live = children
        if self.live and self.finished:
            best = max(score for score, _ in self.finished)
            bound_length = lambda h: max_length if length_penalty > 0 else len(h.ids) + 1
            if all(_score(h.logprob_sum, bound_length(h), length_penalty) <= best
                   for h in self.live):
                self.live, parents = [], []
        return parents

    def best(self, eos_id: int) -> List[int]:
        ids = max(self.finished, key=lambda item: item[0])[1] if self.finished else []
        return ids[:-1] if ids and ids[-1] == eos_id else ids


@torch.no_grad()
def beam_search_batch(model, sources: Sequence[Sequence[int]], width: int, max_length: int,
                      length_penalty: float) -> List[List[int]]:
    """beam_search for several sources of one length at once: every live hypothesis of every
    source is a row of one decoder step (each search is independent of the others)."""
    if width < 1 or max_length < 1:
        raise ValueError(f"beam search needs width >= 1 and max_length >= 1, got {width}, "
                         f"{max_length}")
    cfg = model.config
    all_memory = model.prefill_source(torch.tensor([list(s) for s in sources], dtype=torch.long))
    searches = [_Search() for _ in sources]
    row_source = torch.arange(len(sources))  # the source of each decoder row
    state = model.new_state(len(sources))
    tokens = torch.full((len(sources),), cfg.decoder_start_id, dtype=torch.long)
    for step in range(max_length):
        memory = select_rows(all_memory, row_source)
        logits, state = model.step(tokens, state, torch.full_like(tokens, step), memory)
        rows = torch.log_softmax(logits.double(), dim=-1)
        next_rows, next_source, next_tokens = [], [], []
        first = 0
        for index, search in enumerate(searches):
            count = len(search.live)
            if count == 0:
                continue
            parents = search.advance(rows[first:first + count], width, max_length,
                                     length_penalty, cfg.eos_id)
            next_rows += [first + parent for parent in parents]
            next_source += [index] * len(parents)
            next_tokens += [h.ids[-1] for h in search.live]
            first += count
        if not next_rows:
            break
        state = select_rows(state, torch.tensor(next_rows, dtype=torch.long))
        row_source = torch.tensor(next_source, dtype=torch.long)
        tokens = torch.tensor(next_tokens, dtype=torch.long)
    return [search.best(cfg.eos_id) for search in searches]


def beam_search(model, source_ids: Sequence[int], width: int, max_length: int,
                length_penalty: float) -> List[int]:
    """The best hypothesis's token ids (without eos) for one source, on a Seq2SeqModel."""
    return beam_search_batch(model, [source_ids], width, max_length, length_penalty)[0]
