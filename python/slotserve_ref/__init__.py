"""PyTorch reference of slotserve's models (docs/MODEL_FORMAT.md; docs/MODEL_FORMAT.md "The
attention kinds"; encoder–decoder models §8): the
executable specification the C++ engine is checked against, plus the tools that write model
directories.

Modules (run with Debian's /usr/bin/python3, PYTHONPATH=python):
  config            config.json as dataclasses; strict load/save (unknown keys are errors)
  model             LanguageModel: parallel form (forward) and recurrent form (new_state/step)
  attention_*       one module per attention kind (abc, rfa, luna, softmax), both forms each;
                    attention_abc_controls serves abc's other memory controls (window,
                    linformer, compressive, random, learned relu/sigmoid; docs/ABC_CONTROLS.md)
  abc_controls      those controls' control vectors: rows, live rows, splitmix64 draw, limits
  safetensors_io    safetensors read/write (F32, F16, BF16, I8) without the safetensors package
  model_dir         the model directory: docs/MODEL_FORMAT.md tensor table, save/load with checks
  int8_weights      int8 weight-only format: which tensors, per-row quantize/dequantize, checks
  init              deterministic random initialisation (demo, tests, golden data)
  convert           CLI: checkpoint {"config", "state_dict"} -> model directory
  make_random_model CLI: (partial) config + seed -> random-weight model directory
  golden_cli        the --only/--check command line of the golden-data writers
  fla/              float64 reference of flash-linear-attention's abc/gsa checkpoints (issue 20,
                    docs/FLA_CHECKPOINTS.md)

Encoder–decoder models (docs/ARCHITECTURE.md "Encoder–decoder models"):
  seq2seq_config    "slotserve-seq2seq" config.json (encoder, decoder, cross_attention)
  cross_attention_* one module per cross kind (softmax, abc, rfa, luna + ConvLuna filter,
                    srformer): memory build from the encoder output, per-step read
  seq2seq_model     Seq2seqModel: teacher-forced forward; prefill_source + step (recurrent)
  seq2seq_model_dir the docs/ARCHITECTURE.md "Encoder–decoder models" tensor table, save/load with
  checks
  make_random_seq2seq_model  CLI: random-weight seq2seq model directory
  (python/train_seq2seq.py trains one; convert.py converts either kind of checkpoint)

Tests: python/tests (unittest), registered in ctest with label `python`:
  ctest --test-dir build -L python
or directly:
  cd python/tests && PYTHONPATH=..:. /usr/bin/python3 -m unittest
"""
