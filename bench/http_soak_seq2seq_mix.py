"""bench/http_soak.py's request mix for an encoder-decoder (translation) model.

Every request carries a Spanish source (Reina-Valera 1909 verses as text, or the committed
test pairs' source token ids); the prompt, when sent, is an English target prefix. The mix:
translations (n 1-3, sampling, logprobs, now and then a prefix and echo), best_of, beam search
(n-best with a length penalty), streams of which 40% are dropped by the client, the scoring of
a given translation (echo + logprobs with eos forced by logit_bias: every prompt token scored,
none null), /tokenize round trips, and requests that must be refused with 400 naming the
parameter: no source, an empty or mistyped source, a source id outside the vocabulary, a source
longer than the encoder takes, a batch of prompts beside a source, and chat.

Plans have bench/http_soak.py's shape: (kind, path, body, expected choices, streamed, chunks
before a drop or None).
"""

import os

# Reina-Valera 1909 (public domain), as sword-text-sparv's diatheke gives them.
SOURCES = (
    "Y murió Elimelech, marido de Noemi, y quedó ella con sus dos hijos;",
    "Y murieron también los dos, Mahalón y Chelión, quedando así la mujer desamparada de sus "
    "dos hijos y de su marido.",
    "Como está escrito en Isaías el profeta: He aquí yo envío á mi mensajero delante de tu "
    "faz, que apareje tu camino delante de ti.",
    "Porque de tal manera amó Dios al mundo, que ha dado á su Hijo unigénito, para que todo "
    "aquel que en él cree, no se pierda, mas tenga vida eterna.",
    "Salmo de David. JEHOVÁ es mi pastor; nada me faltará.",
    "Y dijo Dios: Sea la luz: y fué la luz.",
    "Bienaventurados los pacificadores: porque ellos serán llamados hijos de Dios.",
    "Mas el ángel les dijo: No temáis; porque he aquí os doy nuevas de gran gozo, que será "
    "para todo el pueblo:",
)
# Target prefixes and whole translations to score (World English Bible wording).
PREFIXES = ("And", "God said", "Blessed are", "Elimelech", "The LORD")
TRANSLATIONS = (
    "Elimelech, Naomi’s husband, died; and she was left with her two sons.",
    "God said, “Let there be light,” and there was light.",
    "Blessed are the peacemakers, for they shall be called children of God.",
)
SOURCE_IDS_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                               "models/trained/es-en-test-ruth-24.src.ids")


def source_id_lines():
    with open(SOURCE_IDS_FILE, encoding="ascii") as lines:
        return [[int(word) for word in line.split()] for line in lines if line.strip()]


class Seq2seqMix:
    def __init__(self, config, sampling):
        self.vocab_size = config["vocab_size"]
        self.eos_id = config["eos_id"]
        self.max_source = config["encoder"]["max_source_tokens"]
        self.sampling = sampling  # bench/http_soak.py's random sampling options
        self.id_sources = source_id_lines()

    def source(self, rng):
        if rng.random() < 0.3:
            return rng.choice(self.id_sources)
        return rng.choice(SOURCES)

    def plan(self, rng):
        roll = rng.random()
        source = self.source(rng)
        if roll < 0.25:
            n = rng.randint(1, 3)
            body = {"source": source, "n": n, **self.sampling(rng, self.vocab_size)}
            if rng.random() < 0.3:
                body["prompt"] = rng.choice(PREFIXES)
                if rng.random() < 0.5:
                    body.update(echo=True, logprobs=body.get("logprobs", 0))
            return "translate", "/v1/completions", body, n, False, None
        if roll < 0.33:
            n = rng.randint(1, 2)
            body = {"source": source, "n": n, "best_of": rng.randint(n + 1, 4),
                    **self.sampling(rng, self.vocab_size)}
            body["temperature"] = 1.0
            return "best_of", "/v1/completions", body, n, False, None
        if roll < 0.43:
            width = rng.randint(2, 5)
            n = rng.randint(1, width)
            body = {"source": source, "use_beam_search": True, "best_of": width, "n": n,
                    "length_penalty": rng.choice([0.0, 1.0]), "max_tokens": rng.randint(4, 40),
                    "temperature": 0.0}
            return "beam", "/v1/completions", body, n, False, None
        if roll < 0.63:
            n = rng.randint(1, 2)
            body = {"source": source, "n": n, "stream": True,
                    **self.sampling(rng, self.vocab_size)}
            if rng.random() < 0.3:
                body["prompt"] = rng.choice(PREFIXES)
            drop = rng.randint(1, 20) if rng.random() < 0.4 else None
            return "stream", "/v1/completions", body, n, True, drop
        if roll < 0.78:
            body = {"source": source, "prompt": rng.choice(TRANSLATIONS), "echo": True,
                    "logprobs": rng.randint(0, 2), "max_tokens": 1,
                    "logit_bias": {str(self.eos_id): 100}, "stream": rng.random() < 0.3}
            return "score", "/v1/completions", body, 1, body["stream"], None
        if roll < 0.86:
            return "tokenize", "/tokenize", {"prompt": rng.choice(TRANSLATIONS),
                                             "add_special_tokens": False}, 0, False, None
        bad = rng.choice([
            ("source", {"prompt": "And", "max_tokens": 4}),
            ("source", {"source": "", "max_tokens": 4}),
            ("source", {"source": 7, "max_tokens": 4}),
            ("source", {"source": [5, 6, self.vocab_size + 3]}),
            ("source", {"source": [300] * (self.max_source + 5)}),
            ("prompt", {"source": source, "prompt": ["And", "God"]}),
            ("n", {"source": source, "n": 0}),
        ])
        if rng.random() < 0.15:
            return "bad:messages", "/v1/chat/completions", {
                "messages": [{"role": "user", "content": SOURCES[0]}]}, 0, False, None
        return "bad:" + bad[0], "/v1/completions", bad[1], 0, False, None
