// The C++ side of the tokenizer.json oracle test (oracle_test.mjs): loads one tokenizer file
// through engine::Tokenizer::Load and answers one JSON line per request line on stdin.
//   request:  {"text": "...", "parse_special": true}
//   answer:   {"ids": [...], "decoded": "...", "streamed": "..."}  or  {"error": "..."}
// "decoded" is Tokenizer::Decode of the ids; "streamed" the IncrementalDetokenizer's deltas
// concatenated, which must equal it. When the file does not load, one line
// {"load_error": "..."} and exit status 2.
// With --bench TEXT_FILE (bench/tokenizer_speed.mjs): encodes the file's lines over and over
// for at least two seconds of this thread's CPU time (so that a busy machine does not skew
// it) and prints {"mb_per_s": ..., "tokens": ...}.
#include <ctime>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "engine/incremental_detokenizer.h"
#include "engine/tokenizer.h"
#include "nlohmann/json.hpp"

namespace {

int Bench(const slotserve::engine::Tokenizer& tokenizer, const char* text_file) {
  std::ifstream in(text_file);
  std::vector<std::string> lines;
  size_t bytes_per_pass = 0;
  for (std::string line; std::getline(in, line);) {
    bytes_per_pass += line.size();
    lines.push_back(std::move(line));
  }
  if (bytes_per_pass == 0) {
    std::cerr << text_file << ": no text to encode\n";
    return 1;
  }
  auto cpu_seconds = [] {
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + now.tv_nsec * 1e-9;
  };
  const double start = cpu_seconds();
  double seconds = 0;
  size_t bytes = 0;
  size_t tokens = 0;
  while (seconds < 2.0) {
    for (const std::string& line : lines) tokens += tokenizer.Encode(line, true)->size();
    bytes += bytes_per_pass;
    seconds = cpu_seconds() - start;
  }
  std::cout << nlohmann::json{{"mb_per_s", bytes / seconds / 1e6}, {"tokens", tokens}}.dump()
            << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using slotserve::engine::IncrementalDetokenizer;
  using slotserve::engine::Tokenizer;
  const bool bench = argc == 4 && std::string_view(argv[2]) == "--bench";
  if (argc != 2 && !bench) {
    std::cerr << "usage: " << argv[0] << " TOKENIZER_FILE [--bench TEXT_FILE]"
              << "  (requests as JSON lines on stdin)\n";
    return 1;
  }
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = Tokenizer::Load(argv[1]);
  if (!tokenizer.ok()) {
    std::cout << nlohmann::json{{"load_error", std::string(tokenizer.status().message())}}.dump()
              << std::endl;
    return 2;
  }
  if (bench) return Bench(**tokenizer, argv[3]);
  std::cout << nlohmann::json{{"piece_count", (*tokenizer)->piece_count()},
                              {"bos_id", (*tokenizer)->bos_id()},
                              {"eos_id", (*tokenizer)->eos_id()},
                              {"adds_bos", (*tokenizer)->adds_bos()},
                              {"adds_eos", (*tokenizer)->adds_eos()}}
                   .dump()
            << "\n";
  std::string line;
  while (std::getline(std::cin, line)) {
    const nlohmann::json request = nlohmann::json::parse(line, nullptr, false);
    if (request.is_discarded() || !request.contains("text") || !request["text"].is_string()) {
      std::cout << nlohmann::json{{"error", "bad request line"}}.dump() << "\n";
      continue;
    }
    const bool parse_special = request.value("parse_special", true);
    absl::StatusOr<std::vector<int32_t>> ids =
        (*tokenizer)->Encode(request["text"].get<std::string>(), parse_special);
    if (!ids.ok()) {
      std::cout << nlohmann::json{{"error", std::string(ids.status().message())}}.dump() << "\n";
      continue;
    }
    IncrementalDetokenizer stream(tokenizer->get());
    std::string streamed;
    for (int32_t id : *ids) streamed += stream.Push(id);
    streamed += stream.Flush();
    std::cout << nlohmann::json{{"ids", *ids},
                                {"decoded", (*tokenizer)->Decode(*ids)},
                                {"streamed", streamed}}
                     .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  }
  return 0;
}
