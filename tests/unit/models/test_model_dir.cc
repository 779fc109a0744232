#include "tests/unit/models/test_model_dir.h"

#include <cstring>
#include <fstream>
#include <random>
#include <stdexcept>

#include "kernels/float16.h"
#include "models/model_config.h"
#include "models/model_weights.h"

namespace slotserve::models::testing {

TempDir::TempDir() {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "slotserve-models-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

nlohmann::json SmallConfig(const std::string& kind) {
  nlohmann::json config = {{"format", "slotserve-lm"},
                           {"format_version", 1},
                           {"vocab_size", 40},
                           {"d_model", 16},
                           {"n_layers", 2},
                           {"n_heads", 4},
                           {"d_ffn", 24},
                           {"activation", "gelu"},
                           {"norm_eps", 1e-5},
                           {"position", "sinusoidal"},
                           {"position_offset", 0},
                           {"tie_embeddings", true},
                           {"embed_scale", 4.0},
                           {"bos_id", 1},
                           {"eos_id", 2}};
  if (kind == "abc") {
    config["attention"] = {{"kind", "abc"}, {"slots", 4}};
  } else if (kind == "rfa") {
    config["attention"] = {{"kind", "rfa"},         {"features", 4}, {"gate", true},
                           {"feature_scale", 0.5},  {"eps", 0.25},   {"norm_eps", 1e-3},
                           {"layout", "interleave"}};
  } else if (kind == "luna") {
    config["attention"] = {
        {"kind", "luna"}, {"length", 3}, {"activation", "softplus"}, {"tie_kv", true}};
  } else {
    config["attention"] = {{"kind", "softmax"}, {"max_context", 12}};
  }
  return config;
}

std::string SafetensorsBytes(const std::vector<TensorSpec>& tensors, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-0.5f, 0.5f);
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  for (const TensorSpec& tensor : tensors) {
    int64_t elements = 1;
    for (int64_t extent : tensor.shape) elements *= extent;
    const size_t begin = data.size();
    for (int64_t i = 0; i < elements; ++i) {
      const float value = uniform(rng);
      if (tensor.dtype == "F16" || tensor.dtype == "BF16") {
        const uint16_t bits =
            tensor.dtype == "F16" ? kernels::FloatToHalf(value) : kernels::FloatToBFloat16(value);
        data.append(reinterpret_cast<const char*>(&bits), sizeof(bits));
      } else {
        data.append(reinterpret_cast<const char*>(&value), sizeof(value));
      }
    }
    header[tensor.name] = {
        {"dtype", tensor.dtype}, {"shape", tensor.shape}, {"data_offsets", {begin, data.size()}}};
  }
  const std::string header_text = header.dump();
  return RawSafetensorsBytes(header_text.size(), header_text, data);
}

std::string RawSafetensorsBytes(uint64_t declared_header_length, const std::string& header,
                                const std::string& data) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i)
    bytes[i] = static_cast<char>((declared_header_length >> (8 * i)) & 0xFF);
  return bytes + header + data;
}

std::vector<TensorSpec> ExpectedTensorSpecs(const nlohmann::json& config) {
  auto parsed = ParseModelConfig(config.dump());
  if (!parsed.ok()) throw std::runtime_error(std::string(parsed.status().message()));
  std::vector<TensorSpec> specs;
  for (const ExpectedTensor& tensor : ExpectedTensors(*parsed)) {
    specs.push_back({tensor.name, "F32", tensor.shape});
  }
  return specs;
}

void WriteFile(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!file) throw std::runtime_error("cannot write " + path.string());
}

void WriteModelDir(const std::filesystem::path& dir, const nlohmann::json& config,
                   const std::vector<TensorSpec>& tensors) {
  std::filesystem::create_directories(dir);
  WriteFile(dir / "config.json", config.dump(2));
  WriteFile(dir / "model.safetensors", SafetensorsBytes(tensors));
}

void WriteModelDir(const std::filesystem::path& dir, const nlohmann::json& config) {
  WriteModelDir(dir, config, ExpectedTensorSpecs(config));
}

namespace {

// The object holding the last component of `dotted_path`, and that component.
std::pair<nlohmann::json*, std::string> Parent(nlohmann::json& object,
                                               const std::string& dotted_path) {
  nlohmann::json* node = &object;
  std::string path = dotted_path;
  for (size_t dot; (dot = path.find('.')) != std::string::npos; path = path.substr(dot + 1)) {
    node = &(*node)[path.substr(0, dot)];
  }
  return {node, path};
}

}  // namespace

void SetPath(nlohmann::json& object, const std::string& dotted_path, const nlohmann::json& value) {
  auto [parent, key] = Parent(object, dotted_path);
  (*parent)[key] = value;
}

void ErasePath(nlohmann::json& object, const std::string& dotted_path) {
  auto [parent, key] = Parent(object, dotted_path);
  parent->erase(key);
}

}  // namespace slotserve::models::testing
