"""evaluate_translation.py's BLEU: the 13a tokenizer (sacreBLEU's default) and nltk's corpus
BLEU on it."""

import unittest

import evaluate_translation as et


class Tokenize13aTest(unittest.TestCase):
    def test_splits_ascii_punctuation_but_not_inside_numbers(self):
        self.assertEqual(et.tokenize_13a('He said, "Go!" (v. 3.5) 1,000 2-3'),
                         ["He", "said", ",", '"', "Go", "!", '"', "(", "v", ".", "3.5", ")",
                          "1,000", "2", "-", "3"])

    def test_keeps_case_and_non_ascii_quotes(self):
        self.assertEqual(et.tokenize_13a("Ruth said, “Don’t urge me.”"),
                         ["Ruth", "said", ",", "“Don’t", "urge", "me", ".", "”"])

    def test_unescapes_entities(self):
        self.assertEqual(et.tokenize_13a("a &amp; b"), ["a", "&", "b"])


class CorpusBleuTest(unittest.TestCase):
    def test_identical_text_scores_100_and_disjoint_text_0(self):
        refs = ["The beginning of the Good News of Jesus Christ, the Son of God.",
                "I can do all things through Christ who strengthens me."]
        self.assertAlmostEqual(et.corpus_bleu(refs, refs), 100.0)
        self.assertEqual(et.corpus_bleu(["x y z w v u t s"] * 2, refs), 0.0)

    def test_is_corpus_level_with_brevity_penalty(self):
        refs = ["a b c d e f g h"]
        # 4 of 4 n-gram orders match exactly, but the hypothesis is half as long.
        self.assertAlmostEqual(et.corpus_bleu(["a b c d"], refs), 100.0 * 2.718281828 ** (1 - 2),
                               places=4)


if __name__ == "__main__":
    unittest.main()
