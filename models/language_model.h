// A language model loaded from a model directory, running on one backend: the interface the
// engine decodes through. TransformerModel (decoder-only, our format), FlaModel (an fla
// checkpoint as stored) and Seq2seqModel (encoder-decoder, whose Encode fills a slot's cross
// memory before decoding) implement it. Not thread-safe: one engine thread owns it
// (docs/ARCHITECTURE.md "Floors").
#pragma once

#include <filesystem>
#include <memory>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/backend.h"
#include "models/kv_cache_dtype.h"
#include "models/model_config.h"
#include "models/sampling_columns.h"
#include "models/seq2seq_shape.h"
#include "models/state_arena.h"

namespace slotserve::models {

enum class LogitsWanted { kLastToken, kEveryToken };

struct FlaConfig;

// The guard every model's Prefill, Step and Encode run on their ids: INTERNAL naming `call`,
// the first token outside [0, vocab_size) and its index. It is an assertion, not a request
// check: the engine's entry refuses bad prompt and source ids naming the wire field
// (engine/request_validation.cc, source_validation.cc), and generated ids come from the
// selection op, so an id out of range here is a caller's bug. It stays a status in every build
// (rather than an abort in debug only) because the embedding would read out of bounds
// otherwise, it costs one compare per token against a whole layer stack per token, and the
// tools and benchmarks that call models directly get a message instead of a crash.
absl::Status CheckTokensInVocabulary(std::span<const int32_t> tokens, int vocab_size,
                                     const char* call);

class LanguageModel;

// Choices a server makes about how it runs a model, beyond what the model directory says.
struct ModelLoadOptions {
  KvCacheDtype kv_cache_dtype = KvCacheDtype::kF32;  // f16: decoder-only softmax models only
};

// The attention kind the server reports (model info, the build_info metric, state blobs): the
// kind's name in our format, or fla's model type ("abc", "gsa") for an fla checkpoint.
std::string ServedAttentionKind(const LanguageModel& model);
// The start-up line's attention: DescribeAttention of our format, DescribeFlaAttention of fla's.
std::string DescribeServedAttention(const LanguageModel& model);

class LanguageModel {
 public:
  virtual ~LanguageModel() = default;

  // Loads config.json and model.safetensors from `dir` (tokenizer.model is the engine's
  // business): our decoder-only or encoder-decoder format, or an fla `abc` / `gsa` checkpoint
  // (config.json with fla's model_type; weights possibly sharded). Every refusal names the file
  // and the key or tensor at fault.
  static absl::StatusOr<std::unique_ptr<LanguageModel>> Load(const std::filesystem::path& dir,
                                                             kernels::Backend backend,
                                                             const ModelLoadOptions& options = {});

  virtual const ModelConfig& config() const = 0;
  virtual kernels::Backend backend() const = 0;
  // State bytes one request holds (docs/MODEL_FORMAT.md "The attention kinds"), the unit the slot
  // pool is sized in.
  virtual int64_t state_bytes_per_request() const = 0;
  // Longest sequence one request may reach (max_context for softmax, unbounded otherwise).
  virtual int32_t max_positions() const = 0;

  virtual absl::StatusOr<std::unique_ptr<StateArena>> AllocateStates(int num_slots) const = 0;
  // As AllocateStates, for a server that caps how many requests hold a source at once:
  // seq2seq models give the slots `cross_memories` (1..num_slots) cross memory blocks, one per
  // request however many slots its beams or choices take (docs/ARCHITECTURE.md "Encoder–decoder
  // models"). Decoder-only models have no cross memory and ignore the count.
  virtual absl::StatusOr<std::unique_ptr<StateArena>> AllocateStatesSharingCrossMemories(
      int num_slots, int cross_memories) const;

  // Encoder–decoder models (docs/ARCHITECTURE.md "Encoder–decoder models") describe themselves
  // here; decoder-only ones return null. For a seq2seq model, config() describes the decoder (its
  // n_layers and self-attention; the shared vocabulary, norms and ids), so code that only decodes
  // needs nothing else.
  virtual const Seq2seqShape* seq2seq() const { return nullptr; }
  // A flash-linear-attention checkpoint served as stored (models/fla_model.h) describes its own
  // architecture here; config() then gives the shared fields (vocabulary, widths, ids, slots).
  virtual const FlaConfig* fla() const { return nullptr; }
  // Seq2seq models: empties `slot` (position 0), runs the encoder over `source` (ids as given,
  // 1 ... max_source_tokens of them, each in [0, vocab) as the engine's entry checked) and writes
  // the slot's cross memory. The request's decoding then starts with Prefill of decoder_start_id
  // and any target prefix. Copy/Save/Restore of the slot carry the cross memory with it.
  // Decoder-only models refuse with FAILED_PRECONDITION.
  virtual absl::Status Encode(StateArena& states, int slot, std::span<const int32_t> source);

  // Feeds `tokens` (one request) into `slot`, continuing from the slot's position, and
  // advances it. Writes host logits: [vocab] for kLastToken, [tokens.size(), vocab] for
  // kEveryToken. Tokens must be in [0, vocab) (the engine's entry checked them).
  virtual absl::Status Prefill(StateArena& states, int slot, std::span<const int32_t> tokens,
                               LogitsWanted wanted, std::span<float> logits) = 0;

  // One token for each of B requests: tokens[i] goes to slots[i] (distinct slots).
  // Writes host logits [B, vocab] and advances each slot's position.
  virtual absl::Status Step(StateArena& states, std::span<const int32_t> slots,
                            std::span<const int32_t> tokens, std::span<float> logits) = 0;

  // The engine's one decode entry: the same step as Step (same states and positions
  // afterwards), then the selection op (kernels/sampling.h) picks each row's next token as
  // row i of `sampling` says, where the logits are, and only the ids come back, in out_tokens [B].
  // Rows with want_raw_logits also get their raw logits (before any adjustment) in
  // raw_logits, [the rows that want them, vocab] in row order, for logprobs. Why copy rows
  // rather than have the op compute logprobs: few requests ask and a row is only vocab
  // floats, while the op would need a log-softmax and a top-n selection on every backend;
  // this way one double-precision implementation (engine/token_logprobs.h) serves them all.
  // This default steps into host logits and runs the host op on them (what a model whose
  // logits live on the host needs); a model with device logits selects them there.
  virtual absl::Status StepAndSample(StateArena& states, std::span<const int32_t> slots,
                                     std::span<const int32_t> tokens,
                                     const SamplingColumns& sampling, std::span<int32_t> out_tokens,
                                     std::span<float> raw_logits);

  // Feeds `tokens` as Prefill does, then picks the next token from the last token's logits
  // as StepAndSample picks a row's, so a prompt's first generated token follows the same rule
  // as the rest. `sampling` holds that one row; raw_logits: [vocab] when it wants its raw
  // logits, else empty. This default
  // prefills into host logits and runs the host op on them.
  virtual absl::StatusOr<int32_t> PrefillAndSample(StateArena& states, int slot,
                                                   std::span<const int32_t> tokens,
                                                   const SamplingColumns& sampling,
                                                   std::span<float> raw_logits);

 private:
  // The defaults' selection: the host op over host `logits` [rows, vocab].
  absl::Status SelectOnHost(std::span<float> logits, const SamplingColumns& sampling,
                            std::span<int32_t> out_tokens, std::span<float> raw_logits) const;
};

}  // namespace slotserve::models
