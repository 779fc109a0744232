"""float64 reference of flash-linear-attention's `abc` and `gsa` models (issue 20), written from
fla's layer definitions and naive recurrences; docs/FLA_CHECKPOINTS.md is the long form.

Modules:
  config          config.json (fla's ABCConfig / GSAConfig fields), unsupported fields refused
  checkpoint      the Hugging Face directory: single or sharded safetensors, tensor table, legacy names
  ops             norms, activations, SwiGLU, RoPE, short causal conv, GSA gates
  qkv             q/k/v projections with their short convolutions
  abc_mixer       ABC attention: step (running-max recurrence) and chunk (masked softmax) forms
  gsa_mixer       GSA attention: step (decayed two-pass recurrence) and chunk forms
  model           FlaModel: new_state / step / prefill / forward_recurrent
  state_size      bytes of one request's state, from the config
  random_weights  deterministic random tensors for a config
  make_golden_checkpoints  CLI: the golden checkpoints under tests/golden/fla
"""
