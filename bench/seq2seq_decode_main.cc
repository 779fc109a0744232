// slotserve-bench-seq2seq: an encoder–decoder model's decode speed and state bytes per request
// against the source length (issue 12, docs/ARCHITECTURE.md "Encoder–decoder models"). For each
// model directory and source length: B requests are encoded (synthetic ids) and started with
// decoder_start_id, then `steps` batched decode steps are timed (median of repeats, 10th/90th
// percentiles beside it). The bytes per request are the model's (decoder self state + cross
// memory); a bounded cross kind (abc, rfa, luna) holds the same bytes and should step at the same
// speed whatever the source, while softmax and srformer keep the source's keys and values (their
// bytes are sized by encoder.max_source_tokens; their step reads the n rows in use).
//
// Beam columns: what a beam of width 4 holds (4 decoder states + the one cross memory its
// beams share) against 4 whole copies (each beam carrying its own cross memory), and the time
// of one fork (StateArena::Copy: the slot only, the memory shared) against copying the whole
// request's bytes, timed side by side (median of 101).
//
//   slotserve-bench-seq2seq --models DIR[,DIR...] --source-lengths 128,1024,... [--batch 8]
//       [--steps 32] [--repeats 5] [--threads 1] [--csv OUT.csv]
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/compute_threads.h"
#include "bench/synthetic_tokens.h"
#include "bench/timing.h"
#include "models/language_model.h"

ABSL_FLAG(std::vector<std::string>, models, {}, "encoder-decoder model directories");
ABSL_FLAG(std::vector<std::string>, source_lengths, (std::vector<std::string>{"128", "1024"}),
          "source lengths to time");
ABSL_FLAG(int, batch, 8, "requests decoding together");
ABSL_FLAG(int, steps, 32, "decode steps per timed run");
ABSL_FLAG(int, repeats, 5, "timed runs (median reported)");
ABSL_FLAG(int, threads, 1, "compute threads");
ABSL_FLAG(std::string, csv, "", "also write the rows as CSV here");

namespace slotserve::bench {
namespace {

struct Row {
  std::string model;
  std::string cross;
  int source_length = 0;
  int64_t decoder_bytes = 0;
  int64_t cross_bytes = 0;
  double encode_ms = 0;
  Timing step;
  int batch = 0;
  double fork_us = 0;        // StateArena::Copy of an encoded slot
  double whole_copy_us = 0;  // copying decoder + cross bytes, what a fork would copy unshared
};

constexpr int kBeamWidth = 4;

double MedianMicros(int samples, const std::function<void()>& run) {
  std::vector<double> times;
  for (int i = 0; i < samples; ++i) {
    const double begin = NowSeconds();
    run();
    times.push_back((NowSeconds() - begin) * 1e6);
  }
  std::nth_element(times.begin(), times.begin() + samples / 2, times.end());
  return times[samples / 2];
}

// Fork timings on slot 0 (encoded) into the spare slot `spare`.
absl::Status MeasureForks(models::StateArena& arena, int spare, Row& row) {
  const int64_t whole = row.decoder_bytes + row.cross_bytes;
  absl::StatusOr<kernels::DeviceBuffer> from =
      kernels::DeviceBuffer::Allocate(arena.backend(), whole);
  absl::StatusOr<kernels::DeviceBuffer> to =
      kernels::DeviceBuffer::Allocate(arena.backend(), whole);
  if (!from.ok()) return from.status();
  if (!to.ok()) return to.status();
  absl::Status copied;
  row.fork_us = MedianMicros(101, [&] { copied.Update(arena.Copy(0, spare)); });
  row.whole_copy_us = MedianMicros(101, [&] {
    kernels::CopyDeviceToDevice(arena.backend(), to->data(), from->data(), whole);
    kernels::Synchronize(arena.backend());
  });
  return copied;
}

absl::StatusOr<Row> Measure(const std::filesystem::path& dir, int source_length, int batch,
                            int steps, int repeats) {
  auto loaded = models::LanguageModel::Load(dir, kernels::Backend::kCpu);
  if (!loaded.ok()) return loaded.status();
  models::LanguageModel& model = **loaded;
  const models::Seq2seqShape* shape = model.seq2seq();
  if (shape == nullptr) {
    return absl::InvalidArgumentError(dir.string() + " is not an encoder-decoder model");
  }
  if (source_length > shape->max_source_tokens) {
    return absl::InvalidArgumentError(absl::StrCat(dir.string(), ": source length ", source_length,
                                                   " > max_source_tokens ",
                                                   shape->max_source_tokens));
  }
  auto arena = model.AllocateStates(batch + 1);  // the last slot: a fork's destination
  if (!arena.ok()) return arena.status();
  const int vocab = model.config().vocab_size;
  std::vector<int32_t> slots(batch), tokens(batch);
  std::vector<float> logits(static_cast<size_t>(batch) * vocab);
  std::vector<float> last(vocab);
  Row row;
  row.model = dir.filename().string();
  row.cross = shape->cross_kind;
  row.source_length = source_length;
  row.decoder_bytes = shape->decoder_state_bytes;
  row.cross_bytes = shape->cross_memory_bytes;
  row.batch = batch;
  // Every request: encode its own synthetic source, then the start token.
  const auto start_requests = [&]() -> absl::Status {
    for (int i = 0; i < batch; ++i) {
      slots[i] = i;
      const std::vector<int32_t> source = SyntheticTokens(source_length, vocab, 1000 + i);
      const double begin = NowSeconds();
      if (absl::Status s = model.Encode(**arena, i, source); !s.ok()) return s;
      row.encode_ms = (NowSeconds() - begin) * 1e3;
      const int32_t start = shape->decoder_start_id;
      if (absl::Status s = model.Prefill(**arena, i, std::span<const int32_t>(&start, 1),
                                         models::LogitsWanted::kLastToken, last);
          !s.ok()) {
        return s;
      }
      tokens[i] = static_cast<int32_t>((7 * i + 3) % vocab);
    }
    return absl::OkStatus();
  };
  const auto decode = [&]() -> absl::Status {
    for (int step = 0; step < steps; ++step) {
      if (absl::Status s = model.Step(**arena, slots, tokens, logits); !s.ok()) return s;
    }
    return absl::OkStatus();
  };
  auto timing = TimeRepeats({.warmup = 1, .repeats = repeats}, steps, start_requests, decode);
  if (!timing.ok()) return timing.status();
  row.step = *timing;
  if (absl::Status forked = MeasureForks(**arena, batch, row); !forked.ok()) return forked;
  return row;
}

int Run() {
  base::SetComputeThreads(absl::GetFlag(FLAGS_threads));
  std::vector<int> lengths;
  for (const std::string& text : absl::GetFlag(FLAGS_source_lengths)) {
    int length = 0;
    if (!absl::SimpleAtoi(text, &length) || length < 1) {
      std::fprintf(stderr, "--source_lengths: \"%s\" is not a positive integer\n", text.c_str());
      return 2;
    }
    lengths.push_back(length);
  }
  std::vector<Row> rows;
  std::printf(
      "| model | cross | source tokens | decoder bytes | cross bytes | encode ms | "
      "step ms (p10-p90) | tokens/s | beam-4 bytes shared | beam-4 bytes copied | "
      "fork µs | whole-request copy µs |\n"
      "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const std::string& dir : absl::GetFlag(FLAGS_models)) {
    for (const int length : lengths) {
      auto row = Measure(dir, length, absl::GetFlag(FLAGS_batch), absl::GetFlag(FLAGS_steps),
                         absl::GetFlag(FLAGS_repeats));
      if (!row.ok()) {
        std::fprintf(stderr, "%s\n", std::string(row.status().message()).c_str());
        return 1;
      }
      std::printf(
          "| %s | %s | %d | %lld | %lld | %.1f | %.3f (%.3f-%.3f) | %.0f | %lld | %lld | %.1f | "
          "%.1f |\n",
          row->model.c_str(), row->cross.c_str(), row->source_length,
          static_cast<long long>(row->decoder_bytes), static_cast<long long>(row->cross_bytes),
          row->encode_ms, row->step.median * 1e3, row->step.p10 * 1e3, row->step.p90 * 1e3,
          row->batch / row->step.median,
          static_cast<long long>(kBeamWidth * row->decoder_bytes + row->cross_bytes),
          static_cast<long long>(kBeamWidth * (row->decoder_bytes + row->cross_bytes)),
          row->fork_us, row->whole_copy_us);
      std::fflush(stdout);
      rows.push_back(*row);
    }
  }
  if (const std::string csv = absl::GetFlag(FLAGS_csv); !csv.empty()) {
    std::ofstream out(csv);
    out << "model,cross,source_tokens,batch,decoder_bytes,cross_bytes,encode_ms,step_ms_median,"
           "step_ms_p10,step_ms_p90,tokens_per_s,beam4_bytes_shared,beam4_bytes_copied,fork_us,"
           "whole_copy_us\n";
    for (const Row& row : rows) {
      out << row.model << ',' << row.cross << ',' << row.source_length << ',' << row.batch << ','
          << row.decoder_bytes << ',' << row.cross_bytes << ',' << row.encode_ms << ','
          << row.step.median * 1e3 << ',' << row.step.p10 * 1e3 << ',' << row.step.p90 * 1e3 << ','
          << row.batch / row.step.median << ',' << kBeamWidth * row.decoder_bytes + row.cross_bytes
          << ',' << kBeamWidth * (row.decoder_bytes + row.cross_bytes) << ',' << row.fork_us << ','
          << row.whole_copy_us << '\n';
    }
  }
  return 0;
}

}  // namespace
}  // namespace slotserve::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return slotserve::bench::Run();
}
