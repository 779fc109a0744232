"""tokenizer_model.py (issue 15): tokenizers compare by what they encode, not by their bytes,
which also hold the paths spm_train was given; prepare_corpus.py trains with relative names;
the committed tokenizers record no path of the machine that trained them."""

import random
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import tokenizer_model

sys.path.insert(0, str(Path(tokenizer_model.__file__).resolve().parent / "data"))
import prepare_corpus  # noqa: E402

REPO_ROOT = Path(tokenizer_model.__file__).resolve().parents[1]
# The committed models come in families that share one tokenizer each: the decoder-only KJV
# models (trained on the corpus as train.txt) and the Spanish→English translation models (a
# joint model trained on spm-train.txt by python/data/bible_parallel_corpus.py).
FAMILIES = {"kjv-": "train.txt", "es-en-": "spm-train.txt"}
COMMITTED = sorted(REPO_ROOT.glob("models/trained/*/tokenizer.model"))
# Where checkouts and scratch files live on the machines that train and test.
MACHINE_ROOTS = (b"/work", b"/root", b"/tmp", b"/home")


def corpus(seed: int) -> str:
    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "de", "gu", "ve", "zo"]
    words = ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 4)))
             for _ in range(300)]
    return "".join(" ".join(rng.choice(words) for _ in range(12)) + "\n" for _ in range(1500))


def train_with_absolute_paths(directory: Path, text: str, vocab_size: int = 400) -> Path:
    """spm_train as prepare_corpus.py used to call it: absolute --input and --model_prefix."""
    directory.mkdir(parents=True)
    (directory / "train.txt").write_text(text)
    subprocess.run(["spm_train", f"--input={directory / 'train.txt'}",
                    f"--model_prefix={directory / 'tokenizer'}", f"--vocab_size={vocab_size}",
                    "--model_type=unigram", "--byte_fallback=true", "--num_threads=1",
                    "--minloglevel=2"], check=True, capture_output=True)
    return directory / "tokenizer.model"


def train_like_prepare_corpus(directory: Path, text: str, vocab_size: int = 400) -> Path:
    directory.mkdir(parents=True)
    (directory / prepare_corpus.TRAIN_TEXT).write_text(text)
    prepare_corpus.train_tokenizer(directory, vocab_size)
    return directory / f"{prepare_corpus.TOKENIZER_PREFIX}.model"


def compare_cli(expected: Path, actual: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, tokenizer_model.__file__, "compare", str(expected),
                           str(actual)], capture_output=True, text=True, check=False)


class CompareTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory()
        cls.tmp = Path(cls._tmp.name)
        cls.text = corpus(1)
        cls.first = train_with_absolute_paths(cls.tmp / "checkout-a" / "data", cls.text)
        cls.second = train_with_absolute_paths(cls.tmp / "elsewhere" / "b" / "data", cls.text)

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def edited(self, name, edit):
        proto = tokenizer_model.load(self.first)
        edit(proto)
        path = self.tmp / name
        path.write_bytes(proto.SerializeToString())
        return path

    def test_same_vocabulary_trained_in_two_directories_compares_equal(self):
        # The bytes differ only by the recorded paths: that is the bug the byte compare had.
        self.assertNotEqual(self.first.read_bytes(), self.second.read_bytes())
        self.assertEqual(tokenizer_model.embedded_paths(tokenizer_model.load(self.first)),
                         [f"trainer_spec.input: {self.tmp / 'checkout-a/data/train.txt'}",
                          f"trainer_spec.model_prefix: {self.tmp / 'checkout-a/data/tokenizer'}"])
        self.assertEqual(tokenizer_model.differences(tokenizer_model.load(self.first),
                                                     tokenizer_model.load(self.second)), [])
        result = compare_cli(self.first, self.second)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stderr, "")

    def test_training_only_settings_do_not_count(self):
        def edit(proto):
            proto.trainer_spec.num_threads = 8
            proto.trainer_spec.input_sentence_size = 1000
        self.assertEqual(compare_cli(self.first, self.edited("threads.model", edit)).returncode, 0)

    def test_other_vocabulary_compares_unequal_and_says_why(self):
        smaller = train_with_absolute_paths(self.tmp / "smaller", self.text, vocab_size=350)
        result = compare_cli(self.first, smaller)
        self.assertEqual(result.returncode, 1)
        self.assertIn(f"{smaller} encodes differently from {self.first}", result.stderr)
        self.assertIn("vocabulary size: 400 vs 350 pieces", result.stderr)

        other_text = train_with_absolute_paths(self.tmp / "other-text", corpus(2))
        found = tokenizer_model.differences(tokenizer_model.load(self.first),
                                            tokenizer_model.load(other_text))
        self.assertTrue(found)
        self.assertTrue(all(line.startswith(("piece ", "... ")) for line in found), found)

    def test_one_piece_changed_is_named(self):
        proto = tokenizer_model.load(self.first)
        index = len(proto.pieces) - 1
        old_piece = proto.pieces[index].piece

        def rename(p):
            p.pieces[index].piece = "zzz"
        result = compare_cli(self.first, self.edited("renamed.model", rename))
        self.assertEqual(result.returncode, 1)
        self.assertIn(f"piece {index}: {old_piece!r} score", result.stderr)
        self.assertIn("vs 'zzz' score", result.stderr)

        def rescore(p):
            p.pieces[index].score -= 1.0
        found = tokenizer_model.differences(proto,
                                            tokenizer_model.load(self.edited("rescored.model",
                                                                             rescore)))
        self.assertEqual(len(found), 1)
        self.assertTrue(found[0].startswith(f"piece {index}: "), found)

    def test_normalizer_and_encoding_settings_count(self):
        def edit(proto):
            proto.normalizer_spec.add_dummy_prefix = not proto.normalizer_spec.add_dummy_prefix
            proto.trainer_spec.byte_fallback = False
        found = tokenizer_model.differences(tokenizer_model.load(self.first),
                                            tokenizer_model.load(self.edited("norm.model", edit)))
        self.assertEqual(found, ["normalizer_spec.add_dummy_prefix: true vs false",
                                 "trainer_spec.byte_fallback: true vs false"])

    def test_not_a_model(self):
        not_a_model = self.tmp / "train.txt"
        not_a_model.write_text("hello\n")
        empty = self.tmp / "empty.model"
        empty.write_bytes(b"")
        for path in (not_a_model, empty, self.tmp / "missing.model"):
            result = compare_cli(self.first, path)
            self.assertEqual(result.returncode, 2, path)
            self.assertIn(str(path), result.stderr)

    def test_strip_paths_keeps_the_encoding(self):
        copy = self.tmp / "stripped.model"
        copy.write_bytes(self.first.read_bytes())
        subprocess.run([sys.executable, tokenizer_model.__file__, "strip-paths", str(copy)],
                       check=True, capture_output=True)
        stripped = tokenizer_model.load(copy)
        self.assertEqual(list(stripped.trainer_spec.input), ["train.txt"])
        self.assertEqual(stripped.trainer_spec.model_prefix, "tokenizer")
        self.assertEqual(tokenizer_model.embedded_paths(stripped), [])
        self.assertNotIn(str(self.tmp).encode(), copy.read_bytes())
        self.assertEqual(tokenizer_model.differences(tokenizer_model.load(self.first), stripped),
                         [])


class RelativePathsTest(unittest.TestCase):
    def test_prepare_corpus_records_no_path_of_the_machine(self):
        with tempfile.TemporaryDirectory() as tmp:
            text = corpus(1)
            first = train_like_prepare_corpus(Path(tmp) / "a" / "data", text)
            second = train_like_prepare_corpus(Path(tmp) / "b", text)
            proto = tokenizer_model.load(first)
            self.assertEqual(list(proto.trainer_spec.input), ["train.txt"])
            self.assertEqual(proto.trainer_spec.model_prefix, "tokenizer")
            self.assertNotIn(tmp.encode(), first.read_bytes())
            # Trained anywhere, the same corpus gives the same file.
            self.assertEqual(first.read_bytes(), second.read_bytes())

    def test_committed_tokenizers_record_no_absolute_path(self):
        self.assertTrue(COMMITTED, "no models/trained/*/tokenizer.model")
        for path in COMMITTED:
            with self.subTest(model=path.parent.name):
                family = [p for p in FAMILIES if path.parent.name.startswith(p)]
                self.assertEqual(len(family), 1, f"{path.parent.name}: no known model family")
                proto = tokenizer_model.load(path)
                self.assertEqual(tokenizer_model.embedded_paths(proto), [])
                self.assertEqual(list(proto.trainer_spec.input), [FAMILIES[family[0]]])
                self.assertEqual(proto.trainer_spec.model_prefix, "tokenizer")
                data = path.read_bytes()
                for root in MACHINE_ROOTS:
                    self.assertNotIn(root, data)

    def test_committed_tokenizers_encode_alike(self):
        # scripts/evaluate-perplexity.sh scores every model on one set of test ids.
        # Within a family (scripts/evaluate-translation-models.sh likewise scores every
        # translation model on one set of ids).
        for prefix in FAMILIES:
            members = [p for p in COMMITTED if p.parent.name.startswith(prefix)]
            self.assertTrue(members, f"no committed {prefix}* model")
            first = tokenizer_model.load(members[0])
            for path in members[1:]:
                with self.subTest(model=path.parent.name):
                    self.assertEqual(
                        tokenizer_model.differences(first, tokenizer_model.load(path)), [])


if __name__ == "__main__":
    unittest.main()
