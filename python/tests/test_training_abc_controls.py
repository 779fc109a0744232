"""train.py with ABC's memory controls (docs/ABC_CONTROLS.md): the flags build the config the
control needs, the model train.py builds (its initialisation, its forward after
use_chunked_abc) computes exactly the reference's recurrent form, gradients reach the control's
parameters, bad flag combinations are refused, and a two-step run writes a loadable model."""

import contextlib
import io
import json
import signal
import tempfile
import unittest
from pathlib import Path

import torch

import train
from abc_chunked import use_chunked_abc
from slotserve_ref.attention_abc_controls import AbcControlAttention
from slotserve_ref.model import LanguageModel
from slotserve_ref.model_dir import load_model_dir

SMALL = ["--d-model", "16", "--n-layers", "2", "--n-heads", "2", "--d-ffn", "32",
         "--slots", "4", "--seq-len", "16"]
VOCAB = 29

# flags -> the abc attention object train.py must write
RECIPES = {
    "window": (["--control", "window"], {"kind": "abc", "slots": 4, "control": "window"}),
    "linformer": (["--control", "linformer"],
                  {"kind": "abc", "slots": 4, "control": "linformer", "max_positions": 16}),
    "linformer_longer": (["--control", "linformer", "--max-positions", "20"],
                         {"kind": "abc", "slots": 4, "control": "linformer",
                          "max_positions": 20}),
    "compressive": (["--control", "compressive", "--stride", "4"],
                    {"kind": "abc", "slots": 4, "control": "compressive", "stride": 4}),
    "random": (["--control", "random", "--control-seed", "5"],
               {"kind": "abc", "slots": 4, "control": "random", "seed": 5}),
    "relu": (["--abc-activation", "relu"],
             {"kind": "abc", "slots": 4, "control": "learned", "activation": "relu"}),
    "sigmoid": (["--control", "learned", "--abc-activation", "sigmoid"],
                {"kind": "abc", "slots": 4, "control": "learned", "activation": "sigmoid"}),
    "learned_exp": ([], {"kind": "abc", "slots": 4}),
}


def args_for(flags):
    return train.parse_args(["--kind", "abc", "--out", "unused", *SMALL, *flags])


def training_model(flags, seed=3) -> LanguageModel:
    """The model exactly as train.main builds it, before the first step."""
    model = LanguageModel(train.build_config(args_for(flags), VOCAB))
    train.initialise_(model, seed)
    use_chunked_abc(model)
    return model


class TrainingControlsTest(unittest.TestCase):
    def test_flags_build_the_control_config(self):
        for name, (flags, attention) in RECIPES.items():
            with self.subTest(recipe=name):
                cfg = train.build_config(args_for(flags), VOCAB)
                self.assertEqual(cfg.attention.to_dict(), attention)

    def test_training_forward_equals_the_reference_recurrence(self):
        tokens = torch.randint(0, VOCAB, (2, 16), generator=torch.Generator().manual_seed(1))
        for name, (flags, _) in RECIPES.items():
            with self.subTest(recipe=name):
                model = training_model(flags)
                controls = name != "learned_exp"
                self.assertEqual(isinstance(model.layers[0].attn, AbcControlAttention), controls)
                # Train-mode forward in float64 (what the optimiser differentiates) ...
                model = model.double()
                training = model(tokens)
                # ... against the step-by-step reference, run on a model loaded from the same
                # weights (so no patched forward can be involved).
                reference = LanguageModel(model.config).double()
                reference.load_state_dict(model.state_dict())
                with torch.no_grad():
                    recurrent, _ = reference.eval().forward_recurrent(tokens)
                torch.testing.assert_close(training.detach(), recurrent, rtol=0, atol=1e-9)

    def test_gradients_reach_every_trainable_parameter(self):
        tokens = torch.randint(0, VOCAB, (2, 16), generator=torch.Generator().manual_seed(2))
        for name in ("window", "linformer", "compressive", "random", "relu", "sigmoid"):
            with self.subTest(recipe=name):
                model = training_model(RECIPES[name][0])
                loss = torch.nn.functional.cross_entropy(model(tokens).flatten(0, 1),
                                                         tokens.flatten())
                loss.backward()
                for pname, p in model.named_parameters():
                    if pname.endswith(".bias") or "norm" in pname:
                        continue  # zero-initialised; some get no gradient at step 0
                    self.assertTrue(torch.isfinite(p.grad).all(), pname)
                    self.assertGreater(p.grad.abs().max().item(), 0, pname)

    def test_linformer_initialisation_scale(self):
        model = training_model(["--control", "linformer", "--max-positions", "400"])
        proj = model.layers[0].attn.linformer_proj
        self.assertEqual(tuple(proj.shape), (2, 4, 400))
        self.assertAlmostEqual(proj.std().item(), 400 ** -0.5, delta=0.2 * 400 ** -0.5)

    def test_bad_flag_combinations_are_refused(self):
        cases = [
            (["--control", "window", "--abc-activation", "relu"],
             "--abc-activation relu needs --control learned, got --control window"),
            (["--control", "compressive", "--stride", "3"],
             "--control compressive holds 12 positions, fewer than --seq-len 16"),
            (["--control", "linformer", "--max-positions", "8"],
             "--control linformer holds 8 positions, fewer than --seq-len 16"),
        ]
        for flags, message in cases:
            with self.subTest(flags=flags):
                with self.assertRaises(SystemExit) as raised:
                    train.build_config(args_for(flags), VOCAB)
                self.assertIn(message, str(raised.exception))
        args = train.parse_args(["--kind", "rfa", "--out", "x", "--control", "window"])
        with self.assertRaises(SystemExit) as raised:
            train.build_config(args, VOCAB)
        self.assertIn("--control and --abc-activation are for --kind abc, got --kind rfa",
                      str(raised.exception))

    def test_two_steps_write_a_loadable_model(self):
        previous = signal.getsignal(signal.SIGTERM)
        with tempfile.TemporaryDirectory() as tmp:
            data = Path(tmp) / "data"
            data.mkdir()
            (data / "manifest.json").write_text(json.dumps({"tokenizer": {"vocab_size": VOCAB}}))
            gen = torch.Generator().manual_seed(4)
            for split, books in (("train", 3), ("valid", 2)):
                lines = [" ".join(str(int(t)) for t in torch.randint(3, VOCAB, (40,),
                                                                     generator=gen))
                         for _ in range(books)]
                (data / f"{split}.ids").write_text("\n".join(lines) + "\n")
            (data / "tokenizer.model").write_bytes(b"\x0a\x03abc")
            out = Path(tmp) / "run"
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    train.main(["--kind", "abc", *SMALL, "--control", "random",
                                "--control-seed", "9", "--data", str(data), "--out", str(out),
                                "--steps", "2", "--batch-size", "2", "--warmup", "1",
                                "--decay-steps", "1", "--log-every", "1"])
            finally:
                signal.signal(signal.SIGTERM, previous)
            model = load_model_dir(out / "model")
            self.assertEqual(model.config.attention.to_dict(),
                             {"kind": "abc", "slots": 4, "control": "random", "seed": 9})
            summary = json.loads((out / "summary.json").read_text())
            self.assertEqual(summary["attention"]["control"], "random")
            self.assertTrue(summary["valid_ppl"] > 1)


if __name__ == "__main__":
    unittest.main()
