// Builders of model directories and safetensors files for the loader tests: valid ones with
// random weights, and the raw pieces to craft malformed ones.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace slotserve::models::testing {

// A fresh directory under the system temp dir, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A small valid config.json of the given attention kind ("abc", "rfa", "luna", "softmax"):
// vocab 40, d_model 16, 2 layers, 4 heads, d_ffn 24.
nlohmann::json SmallConfig(const std::string& kind);

struct TensorSpec {
  std::string name;
  std::string dtype = "F32";  // written as given, so unsupported names can be tested
  std::vector<int64_t> shape;
};

// The bytes of a safetensors file holding `tensors` back to back with small random values
// (F32/F16/BF16; any other dtype gets 4 bytes per element).
std::string SafetensorsBytes(const std::vector<TensorSpec>& tensors, uint32_t seed = 1);

// The bytes of a file whose 8-byte prefix declares `declared_header_length`, followed by
// `header` and `data` verbatim: for lying or malformed headers.
std::string RawSafetensorsBytes(uint64_t declared_header_length, const std::string& header,
                                const std::string& data);

// Every tensor ExpectedTensors() lists for `config`, as F32 specs.
std::vector<TensorSpec> ExpectedTensorSpecs(const nlohmann::json& config);

void WriteFile(const std::filesystem::path& path, const std::string& bytes);

// Writes config.json and a model.safetensors with `tensors` into `dir`.
void WriteModelDir(const std::filesystem::path& dir, const nlohmann::json& config,
                   const std::vector<TensorSpec>& tensors);
// Same, with exactly the tensors the config expects.
void WriteModelDir(const std::filesystem::path& dir, const nlohmann::json& config);

// Sets a value by dotted path ("attention.slots"), creating objects on the way.
void SetPath(nlohmann::json& object, const std::string& dotted_path, const nlohmann::json& value);
// Removes the key at a dotted path.
void ErasePath(nlohmann::json& object, const std::string& dotted_path);

}  // namespace slotserve::models::testing
