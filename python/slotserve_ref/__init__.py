"""PyTorch reference of slotserve's models (DESIGN §2, §3): the executable specification the
C++ engine is checked against, plus the tools that write model directories.

Modules (run with Debian's /usr/bin/python3, PYTHONPATH=python):
  config            config.json as dataclasses; strict load/save (unknown keys are errors)
  model             LanguageModel: parallel form (forward) and recurrent form (new_state/step)
  attention_*       one module per attention kind (abc, rfa, luna, softmax), both forms each
  safetensors_io    safetensors read/write (F32, F16, BF16) without the safetensors package
  model_dir         the model directory: DESIGN §2 tensor table, save/load with checks
  init              deterministic random initialisation (demo, tests, golden data)
  convert           CLI: checkpoint {"config", "state_dict"} -> model directory
  make_random_model CLI: (partial) config + seed -> random-weight model directory
  golden_cli        the --only/--check command line of the golden-data writers
  fla/              float64 reference of flash-linear-attention's abc/gsa checkpoints (issue 20,
                    docs/FLA_CHECKPOINTS.md)

Tests: python/tests (unittest), registered in ctest with label `python`:
  ctest --test-dir build -L python
or directly:
  cd python/tests && PYTHONPATH=..:. /usr/bin/python3 -m unittest
"""
