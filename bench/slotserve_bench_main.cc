// slotserve-bench: the C++ side of scripts/bench.sh. One invocation runs one suite over the
// given model directories, prints its table and writes it as CSV:
//
//   slotserve-bench --suite=decode  --models=DIR,... --batches=1,2,4 --context=128 --out=DIR
//   slotserve-bench --suite=context --models=DIR,... --contexts=128,1024 --batch=1 --out=DIR
//   slotserve-bench --suite=prefill --models=DIR,... --prompt_lengths=16,256 --out=DIR
//   slotserve-bench --suite=memory  --models=DIR,... --contexts=128,1024 --budgets_gib=1,16
//   slotserve-bench --suite=anchors --out=DIR     (memory bandwidth, sgemm FLOP/s)
//   slotserve-bench --suite=models --models=DIR,... (sizes, weight bytes, FLOPs per token)
//   slotserve-bench --suite=scheduler --models=DIR,... --concurrency=1,32 (in-process engine)
//   slotserve-bench --suite=state --models=DIR,... --context=128 (session export + import)
//   slotserve-bench --suite=scaling --models=DIR,... --threads=2 --batches=8,64 --pairs=15
//                   (1 against N threads in interleaved pairs, with the machine's own ceiling)
//
// Timings are medians of --repeats timed repeats after --warmup untimed ones. --threads sets
// the OpenBLAS thread count (and the bandwidth test's); the PyTorch anchor must use the same.

#include <filesystem>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/compute_threads.h"
#include "base/status_macros.h"
#include "bench/bench_model.h"
#include "bench/decode_benchmark.h"
#include "bench/machine_anchors.h"
#include "bench/memory_table.h"
#include "bench/prefill_benchmark.h"
#include "bench/result_table.h"
#include "bench/scheduler_benchmark.h"
#include "bench/state_round_trip.h"
#include "bench/thread_scaling.h"
#include "models/int8_activations.h"

ABSL_FLAG(std::string, suite, "",
          "anchors, models, decode, context, prefill, memory, scheduler or state");
ABSL_FLAG(std::vector<std::string>, models, {}, "model directories, comma-separated");
ABSL_FLAG(std::string, out, "", "directory the suite's CSV is written to (none: print only)");
ABSL_FLAG(std::string, backend, "cpu", "reference, cpu or cuda");
ABSL_FLAG(int, threads, 1,
          "Compute threads (the engine's worker pool; OpenBLAS runs inside it) and bandwidth-test "
          "threads");
ABSL_FLAG(bool, int8_activations, false,
          "int8 models: quantise linear layers' inputs to int8 too (models/int8_activations.h)");
ABSL_FLAG(std::string, kv_cache_dtype, "f32",
          "softmax models: f32 or f16 KV cache (models/kv_cache_dtype.h); rows of f16 get "
          "\"-kv-f16\" after the model's name");
ABSL_FLAG(int, warmup, 1, "untimed repeats before the timed ones");
ABSL_FLAG(int, repeats, 7, "timed repeats; the tables quote their median");
ABSL_FLAG(int, steps_per_repeat, 8, "decode steps timed together in one repeat");
ABSL_FLAG(std::string, batches, "1,2,4,8,16,32,64,128,256", "decode suite: batch sizes");
ABSL_FLAG(int, context, 128, "decode suite: context length every batch decodes from");
ABSL_FLAG(std::string, contexts, "128,256,512,1024,2048,4096,8192,16384",
          "context and memory suites: context lengths");
ABSL_FLAG(int, batch, 1, "context suite: batch size");
ABSL_FLAG(std::string, prompt_lengths, "16,64,256,1024,4096", "prefill suite: prompt lengths");
ABSL_FLAG(std::string, budgets_gib, "1,16", "memory suite: budgets in GiB");
ABSL_FLAG(int, anchor_array_mib, 128, "anchors suite: bytes per bandwidth-test array (MiB)");
ABSL_FLAG(int, anchor_small_array_mib, 8,
          "anchors suite: bytes per array of the second, cache-sized bandwidth test (MiB)");
ABSL_FLAG(std::string, sgemm_shapes, "1024x1024x1024,64x1024x256,64x8000x256",
          "anchors suite: sgemm shapes MxNxK (y[M,N] = x[M,K] w[N,K]^T)");
ABSL_FLAG(std::string, sgemv_shapes, "1024x256,4000x256",
          "anchors suite: sgemv shapes NxK (y[N] = w[N,K] x[K]), the batch-1 Linear");
ABSL_FLAG(std::string, concurrency, "1,8,32", "scheduler suite: concurrent requests");
ABSL_FLAG(int, prompt_tokens, 16, "scheduler suite: prompt length of every request");
ABSL_FLAG(int, new_tokens, 64, "scheduler suite: tokens every request generates");
ABSL_FLAG(int, pairs, 15, "scaling suite: timed (1 thread, --threads threads) pairs per point");
ABSL_FLAG(double, sampling_temperature, -1.0,
          "scaling suite: >= 0 times StepAndSample at this temperature (the server's step with "
          "its token selection; 0 greedy), < 0 times Step (logits to the host)");
ABSL_FLAG(double, sampling_top_p, 1.0,
          "scaling suite, with --sampling_temperature > 0: the sampled step's nucleus (1 = off)");
ABSL_FLAG(std::string, job_us, "20,1000",
          "scaling suite: job sizes (microseconds on one thread) of the machine's FMA-loop rows");
ABSL_FLAG(int, rounds, 3, "scheduler suite: timed rounds (after one warm-up round)");

namespace slotserve::bench {
namespace {

template <typename T>
absl::StatusOr<std::vector<T>> ParseNumbers(const std::string& list, const char* flag) {
  std::vector<T> values;
  for (absl::string_view text : absl::StrSplit(list, ',')) {
    T value;
    bool ok;
    if constexpr (std::is_same_v<T, double>) {
      ok = absl::SimpleAtod(text, &value) && value > 0;
    } else {
      ok = absl::SimpleAtoi(text, &value) && value > 0;
    }
    if (!ok) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, ": expected positive numbers, got \"", text, "\""));
    }
    values.push_back(value);
  }
  if (values.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, ": expected at least one value"));
  }
  return values;
}

absl::StatusOr<kernels::Backend> ParseBackend(const std::string& name) {
  if (name == "reference") return kernels::Backend::kReference;
  if (name == "cpu") return kernels::Backend::kCpu;
  if (name == "cuda") return kernels::Backend::kCuda;
  return absl::InvalidArgumentError(
      absl::StrCat("--backend: expected reference, cpu or cuda, got \"", name, "\""));
}

// "MxNxK" (or "NxK" with `implicit_m`), as given to --`flag`.
absl::StatusOr<GemmShape> ParseGemmShape(absl::string_view text, const char* flag,
                                         bool implicit_m = false) {
  const std::string full = implicit_m ? absl::StrCat("1x", text) : std::string(text);
  std::vector<std::string> parts = absl::StrSplit(full, 'x');
  GemmShape shape;
  if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &shape.m) ||
      !absl::SimpleAtoi(parts[1], &shape.n) || !absl::SimpleAtoi(parts[2], &shape.k)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", flag, ": expected ",
        implicit_m ? "NxK such as 4000x256" : "MxNxK such as 64x1024x256", ", got \"", text, "\""));
  }
  return shape;
}

absl::Status Emit(const ResultTable& table, const std::string& csv_name) {
  table.Print(std::cout);
  const std::string out = absl::GetFlag(FLAGS_out);
  if (out.empty()) return absl::OkStatus();
  std::error_code error;
  std::filesystem::create_directories(out, error);
  if (error) {
    return absl::UnavailableError(
        absl::StrCat("--out ", out, ": cannot create: ", error.message()));
  }
  return table.WriteCsv(std::filesystem::path(out) / csv_name);
}

RepeatPlan PlanFromFlags() {
  return RepeatPlan{.warmup = absl::GetFlag(FLAGS_warmup), .repeats = absl::GetFlag(FLAGS_repeats)};
}

absl::Status RunAnchors() {
  const int threads = absl::GetFlag(FLAGS_threads);
  // The anchors measure OpenBLAS itself on `threads` threads (the kernels run it on one).
  base::SetOpenBlasThreads(threads);
  ResultTable table("machine anchors", {"anchor", "value", "unit", "detail"});
  table.NewRow().Add("threads").Add(threads).Add("threads").Add("OpenBLAS and bandwidth test");

  // Twice: arrays far beyond the last-level cache (DRAM), and arrays about the size of the
  // bundled model's weights, which a large L3 may hold between decode steps.
  for (const auto& [suffix, mib] :
       {std::pair<std::string, int>{"", absl::GetFlag(FLAGS_anchor_array_mib)},
        std::pair<std::string, int>{"_small", absl::GetFlag(FLAGS_anchor_small_array_mib)}}) {
    BandwidthOptions bandwidth_options;
    bandwidth_options.bytes_per_array = int64_t{mib} << 20;
    bandwidth_options.threads = threads;
    bandwidth_options.plan = PlanFromFlags();
    SLOTSERVE_ASSIGN_OR_RETURN(Bandwidth bandwidth, MeasureBandwidth(bandwidth_options));
    const std::string arrays = absl::StrCat(mib, " MiB arrays");
    table.NewRow()
        .Add(absl::StrCat("copy_bandwidth", suffix))
        .Add(bandwidth.copy_bytes_per_s / 1e9, 3)
        .Add("GB/s")
        .Add(absl::StrCat("STREAM-like copy (read + write bytes), ", arrays));
    table.NewRow()
        .Add(absl::StrCat("read_bandwidth", suffix))
        .Add(bandwidth.read_bytes_per_s / 1e9, 3)
        .Add("GB/s")
        .Add(absl::StrCat("sum of one array, ", arrays));
  }

  for (absl::string_view text : absl::StrSplit(absl::GetFlag(FLAGS_sgemm_shapes), ',')) {
    SLOTSERVE_ASSIGN_OR_RETURN(GemmShape shape, ParseGemmShape(text, "sgemm_shapes"));
    SLOTSERVE_ASSIGN_OR_RETURN(double flops, MeasureSgemmFlops(shape, PlanFromFlags()));
    table.NewRow()
        .Add(absl::StrCat("sgemm_", text))
        .Add(flops / 1e9, 3)
        .Add("GFLOP/s")
        .Add("OpenBLAS cblas_sgemm, y = x w^T");
  }
  for (absl::string_view text : absl::StrSplit(absl::GetFlag(FLAGS_sgemv_shapes), ',')) {
    SLOTSERVE_ASSIGN_OR_RETURN(GemmShape shape,
                               ParseGemmShape(text, "sgemv_shapes", /*implicit_m=*/true));
    SLOTSERVE_ASSIGN_OR_RETURN(double flops, MeasureSgemvFlops(shape.n, shape.k, PlanFromFlags()));
    table.NewRow()
        .Add(absl::StrCat("sgemv_", text))
        .Add(flops / 1e9, 3)
        .Add("GFLOP/s")
        .Add("OpenBLAS cblas_sgemv, y = w x (one row, w read once)");
  }
  return Emit(table, "anchors.csv");
}

// Loads each --models directory with `batch_slots` batch slots and runs `fn` on it.
absl::Status ForEachModel(int batch_slots, const std::function<absl::Status(BenchModel&)>& fn) {
  SLOTSERVE_ASSIGN_OR_RETURN(kernels::Backend backend, ParseBackend(absl::GetFlag(FLAGS_backend)));
  const std::vector<std::string> dirs = absl::GetFlag(FLAGS_models);
  if (dirs.empty()) return absl::InvalidArgumentError("--models: expected model directories");
  absl::StatusOr<models::KvCacheDtype> kv_cache_dtype =
      models::ParseKvCacheDtype(absl::GetFlag(FLAGS_kv_cache_dtype));
  if (!kv_cache_dtype.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--kv-cache-dtype ", kv_cache_dtype.status().message()));
  }
  for (const std::string& dir : dirs) {
    SLOTSERVE_ASSIGN_OR_RETURN(std::unique_ptr<BenchModel> model,
                               BenchModel::Load(dir, backend, batch_slots, *kv_cache_dtype));
    std::cerr << "bench: " << model->name() << " (" << model->kind() << ", "
              << model->weight_bytes() << " weight bytes, "
              << model->model().state_bytes_per_request() << " state bytes per request)\n";
    SLOTSERVE_RETURN_IF_ERROR(fn(*model));
  }
  return absl::OkStatus();
}

DecodeOptions DecodeOptionsFromFlags() {
  return DecodeOptions{.steps_per_repeat = absl::GetFlag(FLAGS_steps_per_repeat),
                       .plan = PlanFromFlags()};
}

absl::Status RunDecode() {
  SLOTSERVE_ASSIGN_OR_RETURN(std::vector<int> batches,
                             ParseNumbers<int>(absl::GetFlag(FLAGS_batches), "batches"));
  const int context = absl::GetFlag(FLAGS_context);
  ResultTable table = MakeDecodeTable(
      absl::StrCat("decode throughput against batch size (engine only, context ", context, ")"));
  const int largest = *std::max_element(batches.begin(), batches.end());
  absl::Status status = ForEachModel(largest, [&](BenchModel& model) {
    return RunBatchSweep(model, batches, context, DecodeOptionsFromFlags(), table);
  });
  SLOTSERVE_RETURN_IF_ERROR(status);
  return Emit(table, "decode_engine.csv");
}

absl::Status RunContext() {
  SLOTSERVE_ASSIGN_OR_RETURN(std::vector<int> contexts,
                             ParseNumbers<int>(absl::GetFlag(FLAGS_contexts), "contexts"));
  const int batch = absl::GetFlag(FLAGS_batch);
  ResultTable table = MakeDecodeTable(
      absl::StrCat("per-token latency against context length (engine only, batch ", batch, ")"));
  absl::Status status = ForEachModel(batch, [&](BenchModel& model) {
    return RunContextSweep(model, contexts, batch, DecodeOptionsFromFlags(), table);
  });
  SLOTSERVE_RETURN_IF_ERROR(status);
  return Emit(table, "context_engine.csv");
}

absl::Status RunPrefill() {
  SLOTSERVE_ASSIGN_OR_RETURN(
      std::vector<int> lengths,
      ParseNumbers<int>(absl::GetFlag(FLAGS_prompt_lengths), "prompt_lengths"));
  ResultTable table = MakePrefillTable();
  absl::Status status = ForEachModel(1, [&](BenchModel& model) {
    return RunPrefillSweep(model, lengths, PlanFromFlags(), table);
  });
  SLOTSERVE_RETURN_IF_ERROR(status);
  return Emit(table, "prefill_engine.csv");
}

absl::Status RunModels() {
  const int context = absl::GetFlag(FLAGS_context);
  ResultTable table("models under benchmark",
                    {"model", "kind", "vocab", "d_model", "n_layers", "n_heads", "d_ffn",
                     "weight_bytes", "state_bytes_per_request", "max_positions",
                     "matmul_flops_per_token", "attention_flops_per_token_at_context", "context"});
  absl::Status status = ForEachModel(1, [&](BenchModel& model) {
    const models::ModelConfig& c = model.config();
    table.NewRow()
        .Add(model.name())
        .Add(model.kind())
        .Add(c.vocab_size)
        .Add(c.d_model)
        .Add(c.n_layers)
        .Add(c.n_heads)
        .Add(c.d_ffn)
        .Add(static_cast<long long>(model.weight_bytes()))
        .Add(static_cast<long long>(model.model().state_bytes_per_request()))
        .Add(model.model().max_positions())
        .Add(model.MatmulFlopsPerToken(), 0)
        .Add(model.AttentionFlopsPerToken(context), 0)
        .Add(context);
    return absl::OkStatus();
  });
  SLOTSERVE_RETURN_IF_ERROR(status);
  return Emit(table, "models.csv");
}

absl::Status RunMemory() {
  SLOTSERVE_ASSIGN_OR_RETURN(std::vector<int> contexts,
                             ParseNumbers<int>(absl::GetFlag(FLAGS_contexts), "contexts"));
  SLOTSERVE_ASSIGN_OR_RETURN(std::vector<double> budgets,
                             ParseNumbers<double>(absl::GetFlag(FLAGS_budgets_gib), "budgets_gib"));
  ResultTable table = MakeMemoryTable();
  absl::Status status = ForEachModel(1, [&](BenchModel& model) {
    return AddMemoryRows(model.name(), model.model(), contexts, budgets, table);
  });
  SLOTSERVE_RETURN_IF_ERROR(status);
  return Emit(table, "memory.csv");
}

absl::Status RunScheduler() {
  SLOTSERVE_ASSIGN_OR_RETURN(std::vector<int> concurrency,
                             ParseNumbers<int>(absl::GetFlag(FLAGS_concurrency), "concurrency"));
  SLOTSERVE_ASSIGN_OR_RETURN(kernels::Backend backend, ParseBackend(absl::GetFlag(FLAGS_backend)));
  ResultTable table = MakeSchedulerTable();
  SchedulerBenchOptions options;
  options.prompt_tokens = absl::GetFlag(FLAGS_prompt_tokens);
  options.new_tokens = absl::GetFlag(FLAGS_new_tokens);
  options.rounds = absl::GetFlag(FLAGS_rounds);
  for (const std::string& dir : absl::GetFlag(FLAGS_models)) {
    for (int requests : concurrency) {
      options.concurrency = requests;
      if (absl::Status status = RunSchedulerPoint(dir, backend, options, table); !status.ok()) {
        return status;
      }
    }
  }
  return Emit(table, "decode_scheduler.csv");
}

absl::Status RunStateRoundTrip() {
  const int context = absl::GetFlag(FLAGS_context);
  const int repeats = std::max(absl::GetFlag(FLAGS_rounds), 1) * 100;
  ResultTable table = MakeStateRoundTripTable();
  SLOTSERVE_RETURN_IF_ERROR(ForEachModel(
      1, [&](BenchModel& model) { return AddStateRoundTripRows(model, context, repeats, table); }));
  return Emit(table, "state_round_trip.csv");
}

absl::Status RunThreadScaling() {
  SLOTSERVE_ASSIGN_OR_RETURN(std::vector<int> batches,
                             ParseNumbers<int>(absl::GetFlag(FLAGS_batches), "batches"));
  SLOTSERVE_ASSIGN_OR_RETURN(std::vector<int> job_us,
                             ParseNumbers<int>(absl::GetFlag(FLAGS_job_us), "job_us"));
  const ScalingOptions options{
      .threads = absl::GetFlag(FLAGS_threads),
      .pairs = absl::GetFlag(FLAGS_pairs),
      .steps_per_repeat = absl::GetFlag(FLAGS_steps_per_repeat),
      .sampling_temperature = static_cast<float>(absl::GetFlag(FLAGS_sampling_temperature)),
      .sampling_top_p = static_cast<float>(absl::GetFlag(FLAGS_sampling_top_p))};
  if (options.threads < 2)
    return absl::InvalidArgumentError("--suite=scaling needs --threads >= 2");
  if (!(options.sampling_top_p > 0.0f && options.sampling_top_p <= 1.0f)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--sampling_top_p must be in (0, 1], got ", options.sampling_top_p));
  }
  ResultTable table = MakeThreadScalingTable(options.threads);
  SLOTSERVE_RETURN_IF_ERROR(AddMachineScalingRows(job_us, options, table));
  const int context = absl::GetFlag(FLAGS_context);
  const int largest = *std::max_element(batches.begin(), batches.end());
  SLOTSERVE_RETURN_IF_ERROR(ForEachModel(largest, [&](BenchModel& model) {
    return AddThreadScalingRows(model, batches, context, options, table);
  }));
  return Emit(table, "thread_scaling.csv");
}

absl::Status Run() {
  const int threads = absl::GetFlag(FLAGS_threads);
  if (threads < 1) return absl::InvalidArgumentError("--threads must be >= 1");
  base::SetComputeThreads(threads);
  models::SetInt8Activations(absl::GetFlag(FLAGS_int8_activations));
  const std::string suite = absl::GetFlag(FLAGS_suite);
  if (suite == "anchors") return RunAnchors();
  if (suite == "decode") return RunDecode();
  if (suite == "context") return RunContext();
  if (suite == "prefill") return RunPrefill();
  if (suite == "memory") return RunMemory();
  if (suite == "models") return RunModels();
  if (suite == "scheduler") return RunScheduler();
  if (suite == "state") return RunStateRoundTrip();
  if (suite == "scaling") return RunThreadScaling();
  return absl::InvalidArgumentError(absl::StrCat(
      "--suite: expected anchors, models, decode, context, prefill, memory, scheduler, state or "
      "scaling, got \"",
      suite, "\""));
}

}  // namespace
}  // namespace slotserve::bench

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("slotserve benchmarks: one suite per run, tables as CSV");
  absl::ParseCommandLine(argc, argv);
  if (absl::Status status = slotserve::bench::Run(); !status.ok()) {
    std::cerr << "slotserve-bench: " << status.message() << "\n";
    return 1;
  }
  return 0;
}
