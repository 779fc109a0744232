"""What the client returns: plain dataclasses built from the server's messages."""

from dataclasses import dataclass, field
from typing import List, Optional, Tuple


@dataclass
class TokenLogprob:
    """A generated token's log probability and the likeliest alternatives at its position,
    under the model's raw distribution: (token id, log probability), best first."""

    id: int
    logprob: float
    top: List[Tuple[int, float]] = field(default_factory=list)


@dataclass
class Chunk:
    """Tokens generated since the previous chunk and the text they completed (text never
    splits a UTF-8 character, so it may lag behind the ids)."""

    token_ids: List[int]
    text: str
    logprobs: List[TokenLogprob] = field(default_factory=list)
    choice_index: int = 0  # which of the request's n choices the tokens belong to
    # prompt_logprobs=True: prompt tokens 1.. scored (0.. beside a source), in choice 0's first
    # chunk only.
    prompt_logprobs: List[TokenLogprob] = field(default_factory=list)


@dataclass
class Timings:
    queue: float  # seconds waiting for a free state slot
    prefill: float  # feeding the prompt
    first_token: float  # arrival to the first generated token
    total: float  # arrival to the end


@dataclass
class Hypothesis:
    """One finished beam-search hypothesis: its generated tokens and text, its score
    (logprob_sum / len(token_ids) ** length_penalty) and the plain sum of its tokens' log
    probabilities, and how it ended ("length", "eos")."""

    token_ids: List[int]
    text: str
    score: float
    logprob_sum: float
    finish_reason: str


@dataclass
class Finished:
    """How a generation ended. finish_reason: "length", "eos", "stop_sequence" or
    "cancelled"."""

    finish_reason: str
    prompt_tokens: int
    generated_tokens: int
    seed: int
    request_id: str
    timings: Timings
    choice_index: int = 0  # which choice ended
    session_handle: str = ""  # the session keeping the final state (keep_session), else ""
    # Beam search (beam_width > 1): the n_best finished hypotheses, best first.
    hypotheses: List[Hypothesis] = field(default_factory=list)


@dataclass
class Completion:
    """A whole generation (Client.complete)."""

    text: str
    token_ids: List[int]
    logprobs: List[TokenLogprob]
    finished: Optional[Finished]
    # prompt_logprobs=True: prompt tokens 1.. scored.
    prompt_logprobs: List[TokenLogprob] = field(default_factory=list)
