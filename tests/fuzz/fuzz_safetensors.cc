// libFuzzer target: model.safetensors bytes -> SafetensorsFile::Open (header length, JSON
// header, dtypes, shapes, byte ranges, overlaps) and, when it opens, the loader's checks of
// the tensors against a fixed small ABC config plus the finite-weights scan and a read of every
// element. The bytes reach the loader through a memfd, so the real mmap path runs.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "models/finite_weights.h"
#include "models/model_config.h"
#include "models/model_weights.h"
#include "models/safetensors_file.h"

namespace {

const slotserve::models::ModelConfig& SmallConfig() {
  static const auto* config =
      new slotserve::models::ModelConfig(*slotserve::models::ParseModelConfig(
          R"({"format": "slotserve-lm", "format_version": 1, "vocab_size": 16, "d_model": 8,
          "n_layers": 1, "n_heads": 2, "d_ffn": 16, "activation": "gelu", "norm_eps": 1e-5,
          "position": "sinusoidal", "position_offset": 0, "tie_embeddings": true,
          "embed_scale": 1.0, "bos_id": 1, "eos_id": 2,
          "attention": {"kind": "abc", "slots": 2}})",
          "fuzz config"));
  return *config;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const int fd = memfd_create("fuzz.safetensors", 0);
  if (fd < 0) return 0;
  size_t written = 0;
  while (written < size) {
    const ssize_t n = write(fd, data + written, size - written);
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  auto file = slotserve::models::SafetensorsFile::Open(path);
  if (file.ok()) {
    slotserve::models::CheckWeights(SmallConfig(), **file).IgnoreError();
    slotserve::models::CheckWeightsAreFinite(**file).IgnoreError();
    float sum = 0;
    for (const auto& [name, tensor] : (*file)->tensors()) {
      for (int64_t i = 0; i < tensor.num_elements(); ++i) sum += tensor.ElementAsFloat32(i);
    }
    static volatile float sink;
    sink = sum;
  }
  close(fd);
  return 0;
}
