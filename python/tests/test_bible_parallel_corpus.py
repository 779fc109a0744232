"""The Spanish→English Bible corpus (issue 13, item 1): OSIS markup stripping on entries copied
from Debian's SWORD modules, colophon and misalignment filters, the by-book split and the TSV
round trip. The last class reads the installed modules and skips when they are absent."""

import importlib.util
import random
import shutil
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "data"))
import bible_parallel_corpus as corpus  # noqa: E402
import kjv_corpus  # noqa: E402
import prepare_corpus  # noqa: E402
import tokenizer_model  # noqa: E402
import sword_bible  # noqa: E402
from bible_parallel_corpus import VersePair  # noqa: E402

# Raw entries as python3-sword's getRawEntry() returns them (Debian 12 modules), some cut short
# where noted.
WEB_GENESIS_1_1 = (
    '<w lemma="strong:H0430">In</w> <w lemma="strong:H0853">the</w> <w lemma="strong:H7225">'
    'beginning</w>, <w lemma="strong:H0430">God</w><note placement="foot"><reference type="'
    'annotateRef">1:1 </reference>The Hebrew word rendered “God” is “אֱלֹהִ֑ים” (Elohim).</note>'
    '<w lemma="strong:H1254">created</w> <w lemma="strong:H0853">the</w> <w lemma="strong:H8064">'
    'heavens</w> <w lemma="strong:H0430">and</w> <w lemma="strong:H0853">the</w> '
    '<w lemma="strong:H0776">earth</w>.')
WEB_PHILIPPIANS_1_1_END = (  # cut at the start
    '<w lemma="strong:G2424">Jesus</w> <w lemma="strong:G5547">Christ</w>,<note placement="foot">'
    '<reference type="annotateRef">1:1 </reference>“Christ” means “Anointed One”.</note>'
    '<w lemma="strong:G2532">to</w> <w lemma="strong:G3956">all</w> <w lemma="strong:G3956">the'
    '</w> <w lemma="strong:G0040">saints</w>')
WEB_PSALM_3_1 = (
    '<div type="x-milestone" subType="x-preverse" sID="pv4877"/><title canonical="true" '
    'type="psalm">A Psalm by David, when he fled from Absalom his son.</title> <lg sID="gen7860"/>'
    ' <l level="1" sID="gen7861"/><div type="x-milestone" subType="x-preverse" eID="pv4877"/>'
    'Yahweh, how <w lemma="strong:H1732">my</w> adversaries <w lemma="strong:H1121">have</w> '
    'increased!<l eID="gen7861" level="1"/> <l level="2" sID="gen7862"/>Many <w lemma="strong:'
    'H1121">are</w> <w lemma="strong:H1121">those</w> <w lemma="strong:H1121">who</w> rise '
    '<w lemma="strong:H1121">up</w> <w lemma="strong:H6440">against</w> <w lemma="strong:H6440">'
    'me</w>. <l eID="gen7862" level="2"/>')
WEB_MATTHEW_17_21 = (
    '<q marker="" who="Jesus">But this kind doesn’t go out except by prayer and fasting.” </q>'
    '<note placement="foot"><reference type="annotateRef">17:21 </reference>NU omits verse 21.'
    '</note><div eID="gen30971" type="x-p"/>')
WEB_SONG_1_2 = (  # cut after the first line
    '<div type="x-milestone" subType="x-preverse" sID="pv8242"/><speaker>Beloved</speaker> '
    '<lg sID="gen15617"/> <l level="1" sID="gen15618"/><div type="x-milestone" subType="x-'
    'preverse" eID="pv8242"/>Let <w lemma="strong:H3588">him</w> kiss <w lemma="strong:H3588">'
    'me</w> <w lemma="strong:H6310">with</w> <w lemma="strong:H3588">the</w> <w lemma="strong:'
    'H5390">kisses</w> <w lemma="strong:H6310">of</w> <w lemma="strong:H3588">his</w> '
    '<w lemma="strong:H6310">mouth</w>;<l eID="gen15618" level="1"/>')
WEB_REVELATION_22_21 = (  # the glossary after the book's end cut after its first entry
    '<div type="x-milestone" subType="x-preverse" sID="pv16039"/><div sID="gen35836" type="x-p"'
    '/><div type="x-milestone" subType="x-preverse" eID="pv16039"/><w lemma="strong:G3956">The'
    '</w> <w lemma="strong:G5485">grace</w> <w lemma="strong:G5485">of</w> <w lemma="strong:'
    'G3956">the</w> <w lemma="strong:G2962">Lord</w> <w lemma="strong:G2424">Jesus</w> '
    '<w lemma="strong:G2962">Christ</w> <w lemma="strong:G3956">be</w> <w lemma="strong:G3326">'
    'with</w> <w lemma="strong:G3956">all</w> <w lemma="strong:G3956">the</w> saints. Amen.  '
    '<chapter eID="Rev.22"/><div eID="gen35836" type="x-p"/> <div canonical="true" '
    'eID="gen35575" osisID="Rev" type="book"/> <div sID="gen35837" type="glossary"/> <milestone '
    'n="Glossary" type="x-usfm-h"/> <title level="1" type="main">World English Bible Glossary'
    '</title> <div sID="gen35838" type="introduction"/> <div sID="gen35839" type="x-p"/> The '
    'following words used in the World English Bible (WEB) are not very common.<div eID="gen35839"'
    ' type="x-p"/> <list> <item subType="x-introduction" type="x-indent-1"><seg type="keyword">'
    'Abaddon</seg> Abaddon is Hebrew for destruction.</item>')
KJV_PSALM_119_9 = (
    '<div type="x-milestone" subType="x-preverse" sID="pv4024"/><title><foreign>ב BETH.</foreign>'
    '</title> <lg sID="gen4643"/> <l level="1" sID="gen4644"/> <div type="x-milestone" subType="x-'
    'preverse" eID="pv4024"/>Wherewithal shall a young <w lemma="strong:H5288">man</w> <w lemma="'
    'strong:H2135">cleanse</w> his <w lemma="strong:H0734">way</w>? by taking <w lemma="strong:'
    'H8104">heed</w> <transChange type="added">thereto</transChange> according to thy <w lemma="'
    'strong:H1697">word</w>. <l eID="gen4644" level="1"/>')
KJV_ROMANS_16_27 = (  # cut at the start
    '<w lemma="strong:G2424">Jesus</w> <w lemma="strong:G5547">Christ</w> <w lemma="strong:G1519">'
    'for</w> <w lemma="strong:G0165">ever</w>. <w lemma="strong:G0281">Amen</w>.  <div eID="gen9005"'
    ' type="x-p"/> <chapter eID="Rom.16"/> <title>Written to the Romans from Corinthus, '
    '<transChange type="added">and sent</transChange> by Phebe servant of the church at Cenchrea.'
    '</title> <div canonical="true" eID="gen8965" osisID="Rom" type="book"/>')
KJV_PSALM_119_1 = (
    '<w lemma="strong:H0835">Blessed</w> <transChange type="added">are</transChange> the '
    '<w lemma="strong:H8549">undefiled</w> in the <w lemma="strong:H1870">way</w>, who <w lemma="'
    'strong:H1980">walk</w> in the <w lemma="strong:H8451">law</w> of the <divineName><w lemma="'
    'strong:H3068">LORD</w></divineName>.<note placement="foot"><reference type="annotateRef">'
    '119.1 </reference>undefiled: or, perfect, or, sincere</note> <l eID="gen4635" level="1"/>')
RV_PHILIPPIANS_4_23 = (
    '<w lemma="strong:G3588">La</w> <w lemma="strong:G5485">gracia</w> <w lemma="strong:G2257">'
    'de nuestro</w> <w lemma="strong:G2962">Señor</w> <w lemma="strong:G2424 G5547">Jesucristo'
    '</w> <w lemma="strong:G3326">sea con</w> <w lemma="strong:G3956">todos</w> <w lemma="strong:'
    'G5216">vosotros</w>. <w lemma="strong:G0281">Amén</w>. <w lemma="strong:G1125">Escrita</w> '
    '<w lemma="strong:G0575">de</w> <w lemma="strong:G4516">Roma</w> <w lemma="strong:G1223">con'
    '</w> <w lemma="strong:G1891">Epafrodito</w>.  <chapter eID="Phil.4"/><div eID="gen1158" '
    'type="x-p"/> <div canonical="true" eID="gen1154" osisID="Phil" type="book"/>')
RV_GENESIS_2_12 = (
    '<w lemma="strong:H2091">Y el oro</w> <w lemma="strong:H1931">de aquella</w> <w lemma="strong:'
    'H0776">tierra</w> <w lemma="strong:H2896">es bueno</w>: <w lemma="strong:H8033">hay allí</w>'
    '<transChange type="added">también</transChange><w lemma="strong:H0916">bdelio</w> '
    '<w lemma="strong:H0068">y piedra</w> <w lemma="strong:H7718">cornerina</w>.')
RV_PSALM_148_6 = (
    '<w lemma="strong:H5975">Y las hizo ser</w> <w lemma="strong:H5769">para siempre</w> '
    '<w lemma="strong:H5769">por los siglos</w>; <w lemma="strong:H5414">púso</w><transChange '
    'type="added">les</transChange><w lemma="strong:H2706">ley</w> <w lemma="strong:H3808">que no'
    '</w> <w lemma="strong:H5674">será quebrantada</w>.')


class OsisToTextTest(unittest.TestCase):
    def test_strong_numbers_and_a_footnote_between_two_words(self):
        self.assertEqual(sword_bible.osis_to_text(WEB_GENESIS_1_1),
                         "In the beginning, God created the heavens and the earth.")
        self.assertEqual(sword_bible.osis_to_text(WEB_PHILIPPIANS_1_1_END),
                         "Jesus Christ, to all the saints")

    def test_canonical_psalm_title_kept_poetry_lines_joined(self):
        self.assertEqual(sword_bible.osis_to_text(WEB_PSALM_3_1),
                         "A Psalm by David, when he fled from Absalom his son. Yahweh, how my "
                         "adversaries have increased! Many are those who rise up against me.")

    def test_quotation_kept_footnote_dropped(self):
        self.assertEqual(sword_bible.osis_to_text(WEB_MATTHEW_17_21),
                         "But this kind doesn’t go out except by prayer and fasting.”")

    def test_speaker_label_dropped(self):
        self.assertEqual(sword_bible.osis_to_text(WEB_SONG_1_2),
                         "Let him kiss me with the kisses of his mouth;")

    def test_nothing_after_the_end_of_the_book(self):
        self.assertEqual(sword_bible.osis_to_text(WEB_REVELATION_22_21),
                         "The grace of the Lord Jesus Christ be with all the saints. Amen.")

    def test_editors_headings_dropped_added_words_kept(self):
        self.assertEqual(sword_bible.osis_to_text(KJV_PSALM_119_9),
                         "Wherewithal shall a young man cleanse his way? by taking heed thereto "
                         "according to thy word.")
        self.assertEqual(sword_bible.osis_to_text(KJV_ROMANS_16_27),
                         "Jesus Christ for ever. Amen.")
        self.assertEqual(sword_bible.osis_to_text(KJV_PSALM_119_1),
                         "Blessed are the undefiled in the way, who walk in the law of the LORD.")

    def test_added_words_separated_added_enclitic_joined(self):
        self.assertEqual(sword_bible.osis_to_text(RV_GENESIS_2_12),
                         "Y el oro de aquella tierra es bueno: hay allí también bdelio y piedra "
                         "cornerina.")
        self.assertEqual(sword_bible.osis_to_text(RV_PSALM_148_6),
                         "Y las hizo ser para siempre por los siglos; púsoles ley que no será "
                         "quebrantada.")

    def test_entities_decoded_and_empty_entry(self):
        self.assertEqual(sword_bible.osis_to_text("Tom &amp; <w>Jerry</w>\t&lt;3 "), "Tom & Jerry <3")
        self.assertEqual(sword_bible.osis_to_text(
            '<chapter eID="2Cor.13"/><div eID="gen1139" type="x-p"/> <div canonical="true" '
            'eID="gen1126" osisID="2Cor" type="book"/>'), "")


class FiltersTest(unittest.TestCase):
    def test_spanish_colophon_removed_from_a_letters_last_verse_only(self):
        text = sword_bible.osis_to_text(RV_PHILIPPIANS_4_23)
        self.assertEqual(corpus.strip_colophon("Phil", True, text),
                         "La gracia de nuestro Señor Jesucristo sea con todos vosotros. Amén.")
        self.assertEqual(corpus.strip_colophon("Phil", False, text), text)
        self.assertEqual(corpus.strip_colophon("Ruth", True, text), text)

    def test_spanish_gap_drops_its_chapter_and_the_next(self):
        spanish = {("Jonah", 1, 1): "uno", ("Jonah", 1, 2): "", ("Jonah", 2, 1): "tres",
                   ("Jonah", 3, 1): "cuatro", ("Jonah", 3, 2): "cinco"}
        english = {("Jonah", 1, 1): "one", ("Jonah", 1, 2): "two", ("Jonah", 2, 1): "three",
                   ("Jonah", 3, 1): "four", ("Jonah", 3, 2): ""}
        pairs, kjv, dropped = corpus.align(spanish, english, {})
        self.assertEqual(pairs, [VersePair("Jonah", 3, 1, "cuatro", "four")])
        self.assertEqual(kjv, [""])
        self.assertEqual(dropped["in a chapter next to a Spanish numbering gap"],
                         ["Jonah.1.1", "Jonah.2.1"])
        self.assertEqual(dropped["Spanish empty (Spanish numbering moves the verse)"],
                         ["Jonah.1.2"])
        self.assertEqual(dropped["English empty (the WEB omits the verse)"], ["Jonah.3.2"])

    def test_chapter_numbered_one_apart_dropped(self):
        lengths = [20, 90, 35, 140, 50, 25, 110, 60]

        def chapter(book, shift):
            return [VersePair(book, 1, i + 1, "e" * lengths[i],
                              "n" * lengths[min(max(i + shift, 0), len(lengths) - 1)])
                    for i in range(len(lengths))]
        kept, dropped = corpus.drop_misaligned(chapter("Ruth", 0) * 3 + chapter("Joel", 1))
        self.assertEqual({p.book for p in kept}, {"Ruth"})
        self.assertEqual(len(dropped["in a chapter whose verse lengths fit better shifted by one"]),
                         len(lengths))

    def test_length_outlier_dropped(self):
        pairs = [VersePair("Ruth", 1, i, "e" * 50, "n" * 50) for i in range(1, 11)]
        pairs[4] = VersePair("Ruth", 1, 5, "e" * 200, "n" * 50)
        kept, dropped = corpus.drop_misaligned(pairs)
        self.assertEqual(len(kept), 9)
        self.assertEqual(list(dropped.values()), [["Ruth.1.5"]])


class SplitAndTsvTest(unittest.TestCase):
    LONG_NAMES = {"Gen": "Genesis", "Ruth": "Ruth", "Esth": "Esther", "Jonah": "Jonah",
                  "Mark": "Mark", "Phil": "Philippians", "Joel": "Joel", "Eph": "Ephesians",
                  "Rev": "Revelation of John"}

    def pairs(self):
        return [VersePair(book, c, v, f"es {book} {c}:{v}", f"en {book} {c}:{v}")
                for book in self.LONG_NAMES for c in (1, 2) for v in (1, 2, 3)]

    def test_held_out_books_never_in_train(self):
        splits = corpus.split_by_book(self.pairs(), self.LONG_NAMES)
        held_out = set(kjv_corpus.VALIDATION_BOOKS + kjv_corpus.TEST_BOOKS)
        self.assertFalse({self.LONG_NAMES[p.book] for p in splits["train"]} & held_out)
        self.assertEqual({self.LONG_NAMES[p.book] for p in splits["test"]},
                         set(kjv_corpus.TEST_BOOKS))
        self.assertEqual({self.LONG_NAMES[p.book] for p in splits["valid"]},
                         set(kjv_corpus.VALIDATION_BOOKS))
        self.assertEqual(sum(len(rows) for rows in splits.values()), len(self.pairs()))
        self.assertEqual(splits, corpus.split_by_book(self.pairs(), self.LONG_NAMES))

    def test_missing_held_out_book_refused(self):
        names = dict(self.LONG_NAMES)
        del names["Jonah"]
        with self.assertRaises(SystemExit):
            corpus.split_by_book([], names)

    def test_tsv_round_trip(self):
        rows = self.pairs() + [VersePair("Ps", 3, 1, "¡OH Jehová, cuánto se han multiplicado!",
                                         "Yahweh, how my adversaries have increased!")]
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "rows.tsv"
            corpus.write_tsv(path, rows)
            self.assertEqual(corpus.read_tsv(path), rows)
            self.assertEqual(path.read_text(encoding="utf-8").splitlines()[-1],
                             "Ps\t3\t1\t¡OH Jehová, cuánto se han multiplicado!\t"
                             "Yahweh, how my adversaries have increased!")
            with self.assertRaises(ValueError):
                corpus.write_tsv(path, [VersePair("Ps", 1, 1, "a\tb", "c")])


@unittest.skipUnless(shutil.which("spm_train"), "needs Debian's sentencepiece (spm_train)")
class TokenIdsTest(unittest.TestCase):
    def test_joint_tokenizer_ids_end_with_eos_without_bos(self):
        spanish = ["En el principio creó Dios los cielos y la tierra.",
                   "Y la tierra estaba desordenada y vacía."]
        english = ["In the beginning, God created the heavens and the earth.",
                   "The earth was formless and empty."]
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp)
            # Running text of the words of every verse in this file, in random order: enough
            # distinct pieces for 400 (256 byte pieces, ~70 characters, the rest merged).
            rng = random.Random(13)
            words = " ".join(spanish + english + [sword_bible.osis_to_text(raw) for raw in (
                WEB_GENESIS_1_1, WEB_PSALM_3_1, WEB_MATTHEW_17_21, WEB_SONG_1_2, KJV_PSALM_119_9,
                KJV_PSALM_119_1, RV_PHILIPPIANS_4_23, RV_GENESIS_2_12, RV_PSALM_148_6)]).split()
            (out / corpus.SPM_TRAIN_TEXT).write_text("".join(
                " ".join(rng.choice(words) for _ in range(12)) + "\n" for _ in range(1500)))
            prepare_corpus.train_tokenizer(out, 400, corpus.SPM_TRAIN_TEXT)
            model = out / "tokenizer.model"
            proto = tokenizer_model.load(model)
            self.assertEqual(list(proto.trainer_spec.input), [corpus.SPM_TRAIN_TEXT])
            self.assertEqual(tokenizer_model.embedded_paths(proto), [])
            ids = corpus.encode_with_eos(model, spanish + english, out / "encode.tmp")
        self.assertEqual(len(ids), 4)
        for row in ids:
            self.assertEqual(row[-1], prepare_corpus.EOS_ID)
            self.assertNotIn(prepare_corpus.BOS_ID, row)
            self.assertEqual(row.count(prepare_corpus.EOS_ID), 1)


def _modules_installed():
    if importlib.util.find_spec("Sword") is None:
        return False
    return all(Path(f"/usr/share/sword/mods.d/{m}.conf").exists()
               for m in (sword_bible.SPANISH_MODULE, sword_bible.ENGLISH_MODULE))


@unittest.skipUnless(_modules_installed(), "needs python3-sword and the sword-text-sparv / "
                     "sword-text-web modules (scripts/install-deps.sh installs them)")
class InstalledModulesTest(unittest.TestCase):
    def test_kjv_versification_and_a_test_verse(self):
        verses = sword_bible.references("KJV")
        self.assertEqual(len(verses), 31102)
        self.assertEqual(len({ref[0] for ref, _ in verses}), 66)
        ruth = [ref for ref, name in verses if name == "Ruth"]
        self.assertEqual((ruth[0], len(ruth)), (("Ruth", 1, 1), 85))
        es = sword_bible.read_module(sword_bible.SPANISH_MODULE, [("Ruth", 1, 1)])
        en = sword_bible.read_module(sword_bible.ENGLISH_MODULE, [("Ruth", 1, 1)])
        self.assertTrue(es[("Ruth", 1, 1)].startswith("Y ACONTECIÓ en los días que gobernaban"))
        self.assertTrue(en[("Ruth", 1, 1)].startswith("In the days when the judges judged,"))

    def test_reference_outside_the_modules_versification_reads_as_missing(self):
        # KJV's 3 John has 14 verses: the Spanish module (KJV) has no 3 John 1:15.
        got = sword_bible.read_module(sword_bible.SPANISH_MODULE, [("3John", 1, 15)])
        self.assertEqual(got, {("3John", 1, 15): None})


if __name__ == "__main__":
    unittest.main()
